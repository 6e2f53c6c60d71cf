import type { FastifyReply } from 'fastify'

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export interface FormField {
  name: string
  label: string
  type: 'text' | 'email' | 'password'
  autocomplete: string
  required?: boolean
  value?: string
  hint?: string
  /** what went wrong with this field: shown next to it, the field marked aria-invalid */
  error?: string
}

export interface FormPage {
  title: string
  intro: string
  action: string
  fields: FormField[]
  button: string
  /** a refusal not about one field */
  error?: string
  /** other ways on, shown after the form as links (a provider's sign-in starts with a GET) */
  links?: { intro: string, items: Array<{ text: string, href: string }> }
}

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1rem;color:#1b1f24;background:#f6f8fa}' +
  'main{max-width:26rem;margin:2rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}' +
  'label{display:block;font-weight:600;margin-top:1rem}input{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #57606a;border-radius:6px}' +
  '[aria-invalid=true]{border-color:#a40e26;border-width:2px}.hint{color:#57606a;font-size:.9rem;margin:.25rem 0 0}.error{color:#a40e26;font-size:.9rem;margin:.25rem 0 0}' +
  'button{margin-top:1.5rem;font:inherit;font-weight:600;padding:.5rem 1rem;border:0;border-radius:6px;background:#1f6f3f;color:#fff;cursor:pointer}' +
  '.ways{list-style:none;padding:0}.ways a{display:inline-block;margin-top:.5rem;padding:.5rem 1rem;border:1px solid #57606a;border-radius:6px;color:#1b1f24;font-weight:600;text-decoration:none}'

/** The pages' one style sheet, served from /auth/page.css (the pages' CSP allows no inline style). */
export const PAGE_CSS = STYLE

async function page (reply: FastifyReply, status: number, title: string, body: string, css: string): Promise<FastifyReply> {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>` +
  `<link rel="stylesheet" href="${escape(css)}"></head>
<body><main><h1>${escape(title)}</h1>${body}</main></body></html>
`
  return await reply.status(status)
    .header('content-security-policy', "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .header('cache-control', 'no-store')
    // Not no-referrer: with it Chromium sends `Origin: null` on the form's POST, which the Origin rule
    // refuses. strict-origin never sends the page's path (the link's token), only its origin.
    .header('referrer-policy', 'strict-origin')
    .type('text/html; charset=utf-8')
    .send(html)
}

/**
 * A page with one form (no script): each field labelled, its hint and error tied to it with
 * aria-describedby, a field in error marked aria-invalid.
 */
export async function formPage (reply: FastifyReply, status: number, form: FormPage, css: string): Promise<FastifyReply> {
  const fields = form.fields.map((f) => {
    const id = `field-${f.name}`
    const described = [f.hint === undefined ? undefined : `${id}-hint`, f.error === undefined ? undefined : `${id}-error`].filter((x) => x !== undefined)
    return `<label for="${id}">${escape(f.label)}</label>` +
      `<input id="${id}" name="${escape(f.name)}" type="${f.type}" autocomplete="${escape(f.autocomplete)}"` +
      `${f.required === false ? '' : ' required'}${f.value === undefined ? '' : ` value="${escape(f.value)}"`}` +
      `${f.error === undefined ? '' : ' aria-invalid="true"'}${described.length === 0 ? '' : ` aria-describedby="${described.join(' ')}"`}>` +
      `${f.hint === undefined ? '' : `<p class="hint" id="${id}-hint">${escape(f.hint)}</p>`}` +
      `${f.error === undefined ? '' : `<p class="error" id="${id}-error">${escape(f.error)}</p>`}`
  }).join('\n')
  const error = form.error === undefined ? '' : `<p class="error" role="alert">${escape(form.error)}</p>`
  const links = form.links === undefined || form.links.items.length === 0
    ? ''
    : `<p>${escape(form.links.intro)}</p><ul class="ways">${form.links.items.map((l) => `<li><a href="${escape(l.href)}">${escape(l.text)}</a></li>`).join('')}</ul>`
  const body = `<p>${escape(form.intro)}</p>${error}<form method="post" action="${escape(form.action)}" novalidate>\n${fields}\n<button type="submit">${escape(form.button)}</button></form>${links}`
  return await page(reply, status, form.title, body, css)
}

/** A page that only says something (a used link), with a way on. */
export async function messagePage (reply: FastifyReply, status: number, title: string, text: string, back: string, css: string): Promise<FastifyReply> {
  return await page(reply, status, title, `<p>${escape(text)}</p><p><a href="${escape(back)}">Go to the sign-in page</a></p>`, css)
}
