import type { FastifyReply } from 'fastify'

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * A small HTML page for the browser steps of a sign-in (a refusal, an expired attempt): the text
 * escaped, no script, nothing loaded from elsewhere.
 */
export async function signInPage (reply: FastifyReply, status: number, title: string, text: string, back: string): Promise<FastifyReply> {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title></head>
<body><main><h1>${escape(title)}</h1><p>${escape(text)}</p><p><a href="${escape(back)}">Back to the board</a></p></main></body></html>
`
  return await reply.status(status)
    .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html)
}
