/// <reference lib="dom" />
// The one way the page reaches the server: the public API and its documented extensions, with the
// token in a header or else the browser's session cookie (same origin), conditional reads (a 304 costs nothing), and errors as messages.

export class ApiError extends Error {
  constructor (message: string, readonly status: number) { super(message) }
}

export interface Client {
  /** JSON of a GET; undefined when `etag` still matches (304). */
  read: <T>(path: string, etag?: string) => Promise<{ body?: T, etag?: string }>
  get: <T>(path: string) => Promise<T>
  /** The address of an API path, for links. */
  href: (path: string) => string
  /** The body of a GET as text (a CSV report). */
  text: (path: string) => Promise<string>
  send: <T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body: unknown) => Promise<T | undefined>
}

export function createClient (base: string, token: () => string | null, fetcher: typeof fetch = fetch): Client {
  async function request (method: string, path: string, body?: unknown, etag?: string): Promise<Response> {
    const headers: Record<string, string> = {}
    const current = token()
    if (current !== null) headers['x-authentication-token'] = current
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (etag !== undefined) headers['if-none-match'] = etag
    const res = await fetcher(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'same-origin' })
    if (res.status >= 400) {
      let message = `${res.status} ${res.statusText}`
      try { message = ((await res.json()) as { message?: string }).message ?? message } catch {}
      throw new ApiError(message, res.status)
    }
    return res
  }
  return {
    async read (path, etag) {
      const res = await request('GET', path, undefined, etag)
      if (res.status === 304) return { etag }
      return { body: await res.json(), etag: res.headers.get('etag') ?? undefined }
    },
    async get (path) {
      return await (await request('GET', path)).json()
    },
    href: (path) => base + path,
    async text (path) {
      return await (await request('GET', path)).text()
    },
    async send (method, path, body) {
      const text = await (await request(method, path, body)).text()
      return text === '' ? undefined : JSON.parse(text)
    }
  }
}
