/** One message out: to whom, about what, plain text. */
export interface Mail { to: string, subject: string, text: string }

/** Sends mail through SMTP_URL (docs/sign-in.md, "Mail"); `send` resolves once the server took it, or rejects saying why. */
export interface Mailer { send: (mail: Mail) => Promise<void>, close: () => void }

/**
 * A mailer for `smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://…` (TLS from the
 * start). nodemailer is imported on the first message, so a server without mail never loads it.
 */
export function createMailer (url: string, from: string, timeoutMs = 10_000): Mailer {
  let transport: Promise<{ sendMail: (m: Mail & { from: string }) => Promise<unknown>, close: () => void }> | undefined
  const open = async () => {
    const nodemailer = await import('nodemailer')
    return nodemailer.createTransport({ url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs })
  }
  return {
    async send (mail) {
      transport ??= open()
      await (await transport).sendMail({ ...mail, from })
    },
    close () { transport?.then((t) => { t.close() }).catch(() => {}) }
  }
}

/** What an answer that made a link says of its mail: `mailed`, and why not when sending failed. */
export interface MailOutcome { mailed: boolean, mail_error?: string }

/** Mails the message when a mailer and an address are there; a failure is told (the link was made all the same), never thrown. */
export async function mailIfPossible (mailer: Mailer | null, mail: Mail | undefined, warn: (msg: string) => void): Promise<MailOutcome> {
  if (mailer === null || mail === undefined) return { mailed: false }
  try {
    await mailer.send(mail)
    return { mailed: true }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err)
    warn(`mail to ${mail.to} not sent: ${why}`)
    // The mail server's own words stay in the log: the answer names only the kind of failure.
    return { mailed: false, mail_error: `the mail was not sent (${mailFailure(err)}); pass the link on by hand` }
  }
}

/** nodemailer's error codes (EAUTH, ECONNECTION, ETIMEDOUT, EENVELOPE, …) are a fixed set: safe to show. */
function mailFailure (err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^E[A-Z]{2,20}$/.test(code) ? `${code}, see the server log` : 'see the server log'
}

/**
 * Mails a message holding a link, but only when the link's origin is PUBLIC_URL: one built from the
 * request's Host header could point anywhere, and a mail from us would carry it to the person.
 */
export async function mailLink (
  mailer: Mailer | null, publicUrl: string | undefined, mail: Mail | undefined, warn: (msg: string) => void
): Promise<MailOutcome> {
  if (mailer !== null && mail !== undefined && publicUrl === undefined) {
    return { mailed: false, mail_error: 'links are mailed only when PUBLIC_URL is set (the address people use); pass the link on by hand' }
  }
  return await mailIfPossible(mailer, mail, warn)
}
