import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { abortable, RefusedAddressError, resolveTarget } from '../delivery/address-policy.js'

export interface HostFetchOptions {
  /** allow loopback and private host addresses (HOST_ALLOW_PRIVATE; link-local and metadata never) */
  allowPrivate?: boolean
  /** one request, redirects and the whole body included (HOST_TIMEOUT_MS; default 30,000) */
  timeoutMs?: number
  /** a longer response is refused (default 16 MiB: a page of 100 issues with long bodies fits) */
  maxBodyBytes?: number
  /** same-origin redirects followed at most (default 3); one to another origin never is */
  maxRedirects?: number
}

/** `fetch` as Octokit calls it (`new Octokit({ request: { fetch } })`): a URL and method, headers, a string body. */
export type HostFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Why a request to an issue host was not made or not finished; the message is short and ours. */
export class HostFetchError extends Error {}
/** The host's address is one the policy refuses: asking again will not help. */
export class HostAddressRefused extends HostFetchError {}

const DEFAULTS = { allowPrivate: false, timeoutMs: 30_000, maxBodyBytes: 16 * 1024 * 1024, maxRedirects: 3 }
const REDIRECTS = new Set([301, 302, 303, 307, 308])
const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * The one way this server talks to an issue host (imports, and whatever else reads from a host):
 * a `fetch` that applies the webhook address policy (the host name is resolved, loopback, private,
 * link-local and metadata addresses are refused unless `allowPrivate`, and the connection goes to
 * the address that was checked, so DNS cannot answer differently in between), follows redirects
 * only within the origin first asked, bounds time and response size, and fails with short reasons
 * of its own (docs/connections.md, "Requests to the host").
 */
export function createHostFetch (options: HostFetchOptions = {}): HostFetch {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
  const o = { ...DEFAULTS, ...given }
  return async (input, given) => {
    // A Request stands for its URL, method and headers (a body only through `init`).
    const init: RequestInit = given ?? (input instanceof Request ? { method: input.method, headers: input.headers, signal: input.signal } : {})
    const first = new URL(input instanceof Request ? input.url : String(input))
    if (first.protocol !== 'http:' && first.protocol !== 'https:') throw new HostFetchError(`only http and https hosts are supported, not ${first.protocol}`)
    if (first.username !== '' || first.password !== '') throw new HostFetchError('the host URL must not carry credentials')
    const headers: Record<string, string> = {}
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => { headers[name] = value })
    headers['accept-encoding'] = 'identity'
    let body = bodyOf(init.body)
    let method = (init.method ?? 'GET').toUpperCase()

    // One timer for the whole exchange, held by the event loop so it always fires.
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, o.timeoutMs)
    const onAbort = (): void => controller.abort()
    init.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      let url = first
      for (let hop = 0; ; hop++) {
        const answer = await exchange(url, method, headers, body, controller.signal, o.allowPrivate, o.maxBodyBytes)
        const location = answer.headers.get('location')
        if (!REDIRECTS.has(answer.status) || location === null) return respond(answer, url)
        const next = new URL(location, url)
        if (next.origin !== first.origin) throw new HostFetchError(`the host answered ${answer.status} with a redirect to another origin (not followed)`)
        if (hop >= o.maxRedirects) throw new HostFetchError(`the host redirected more than ${o.maxRedirects} times`)
        if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
          method = 'GET'
          body = undefined
          delete headers['content-type']
        }
        url = next
      }
    } catch (err) {
      if (timedOut) throw new HostFetchError(`no complete answer within ${o.timeoutMs} ms`)
      // The caller's own abort (its reason: an AbortSignal.timeout's TimeoutError, say).
      if (init.signal?.aborted === true) throw init.signal.reason instanceof Error ? init.signal.reason : Object.assign(new Error('the request was aborted'), { name: 'AbortError' })
      if (err instanceof HostFetchError) throw err
      if (err instanceof RefusedAddressError) throw new HostAddressRefused(`${err.message.replace('WEBHOOK_ALLOW_PRIVATE', 'HOST_ALLOW_PRIVATE')}`)
      const code = (err as { code?: unknown }).code
      throw new HostFetchError(`could not reach the host${typeof code === 'string' ? ` (${code})` : ''}`)
    } finally {
      clearTimeout(timer)
      init.signal?.removeEventListener('abort', onAbort)
    }
  }
}

interface Answer { status: number, headers: Headers, body: Buffer }

function bodyOf (body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return body
  if (body instanceof Uint8Array) return Buffer.from(body)
  if (body instanceof ArrayBuffer) return Buffer.from(body)
  throw new HostFetchError('a request body must be a string or bytes')
}

async function exchange (
  url: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined, signal: AbortSignal, allowPrivate: boolean, maxBytes: number
): Promise<Answer> {
  const target = await abortable(resolveTarget(url.hostname, allowPrivate), signal)
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) (callback as (e: null, a: Array<{ address: string, family: number }>) => void)(null, [target])
    else callback(null, target.address, target.family)
  }
  const client = url.protocol === 'https:' ? https : http
  const sent = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
  return await new Promise<Answer>((resolve, reject) => {
    const request = client.request(url, { method, headers: sent, lookup, signal }, (response) => {
      const status = response.statusCode ?? 0
      const answerHeaders = new Headers()
      for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) answerHeaders.append(response.rawHeaders[i], response.rawHeaders[i + 1])
      if (REDIRECTS.has(status)) {
        response.resume()
        resolve({ status, headers: answerHeaders, body: Buffer.alloc(0) })
        return
      }
      const tooLarge = (): void => {
        response.destroy()
        reject(new HostFetchError(`the host's answer is larger than ${maxBytes} bytes`))
      }
      if (Number(response.headers['content-length'] ?? 0) > maxBytes) return tooLarge()
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) tooLarge()
        else chunks.push(chunk)
      })
      response.on('end', () => resolve({ status, headers: answerHeaders, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(body)
  })
}

function respond (answer: Answer, url: URL): Response {
  if (answer.status < 200 || answer.status > 599) throw new HostFetchError(`the host answered with status ${answer.status}`)
  const response = new Response(NULL_BODY.has(answer.status) ? null : new Uint8Array(answer.body), { status: answer.status, headers: answer.headers })
  Object.defineProperty(response, 'url', { value: url.href })
  return response
}

/** A host's error, told by status and a short reason: never the host's body as sent. */
export interface HostErrorSummary {
  /** the host's HTTP status; null when no answer came (refused address, timeout, network) */
  status: number | null
  reason: string
}

const REASON_LENGTH = 200

/** Control and direction-changing characters out, whitespace folded, cut to 200 characters. */
export function cleanReason (text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, ' ').replace(/\s+/g, ' ').trim()
  return clean.length > REASON_LENGTH ? `${clean.slice(0, REASON_LENGTH - 1)}…` : clean
}

/**
 * Turns what a request to a host threw (an Octokit error, a HostFetchError, our own) into
 * `{ status, reason }`: of a host's error answer only its status is kept, with the status's own
 * reason phrase (`Not Found`); nothing of its body, not even its `message`.
 */
export function hostError (err: unknown): HostErrorSummary {
  const e = err as { status?: unknown, response?: unknown, cause?: unknown, message?: unknown }
  if (e?.cause instanceof HostFetchError) return { status: null, reason: cleanReason(e.cause.message) }
  if (err instanceof HostFetchError) return { status: null, reason: cleanReason(err.message) }
  if (typeof e?.status === 'number' && e.response !== undefined) return { status: e.status, reason: http.STATUS_CODES[e.status] ?? 'error' }
  return { status: null, reason: cleanReason(typeof e?.message === 'string' ? e.message : String(err)) }
}

/** The summary as one line: `the host answered 404: Not Found`, or the reason alone. */
export function describeHostError (err: unknown): string {
  const { status, reason } = hostError(err)
  return status === null ? reason : `the host answered ${status}: ${reason}`
}
