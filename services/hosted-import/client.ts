import type { TSchema, Static } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { nulAt } from '../../schemas/formats.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { registerFormats } from '../../schemas/formats.js'
import { HostAddressRefused } from '../host-fetch.js'

registerFormats()

/** `fetch` as the client calls it: the issue-host fetch with its address policy (a test may wrap it). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>

export interface ClientOptions {
  apiUrl: string
  token: string
  fetch: Fetch
  /** requests per minute at most (the hosted API allows 100 per token); requests are spaced evenly */
  requestsPerMinute?: number
  /** one request's time limit (default 30 s) */
  timeoutMs?: number
  /** network errors and 5xx: this many attempts (default 5), waiting 1, 2, 4… s between */
  attempts?: number
  backoffMs?: number
  /** a longer answer is refused (default 16 MiB) */
  maxBodyBytes?: number
  /** longest rate-limit wait accepted (default one hour); past it the import fails and says when to retry */
  maxWaitMs?: number
  signal: AbortSignal
  /** each request sent (counted as the hosted service counts them) */
  onRequest: () => Promise<void>
  /** a wait for the rate limit begins (seconds) and ends */
  onWait: (seconds: number) => Promise<void>
  onWaited: (seconds: number) => Promise<void>
}

/** The hosted service refused the token: the import stops, saying so. */
export class HostedAuthError extends Error {}
/** The hosted service could not be read (after retries), or answered what was not expected. */
export class HostedError extends Error {}

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>()
function checker<T extends TSchema> (schema: T): TypeCheck<T> {
  let check = checkers.get(schema)
  if (check === undefined) {
    check = TypeCompiler.Compile(schema)
    checkers.set(schema, check)
  }
  return check as TypeCheck<T>
}

/** The answer's text, refused past `max` bytes (never held whole when larger). */
async function bounded (response: Response, max: number): Promise<string> {
  if (Number(response.headers.get('content-length') ?? 0) > max) {
    await response.body?.cancel()
    throw new HostedError(`the hosted service's answer is larger than ${max} bytes`)
  }
  if (response.body === null) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > max) throw new HostedError(`the hosted service's answer is larger than ${max} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Short text for an error from fetch (never the answer's body). */
function reason (err: unknown): string {
  const e = err as { name?: string, message?: string, cause?: { code?: string } }
  if (e.name === 'TimeoutError') return 'no answer in time'
  return e.cause?.code ?? e.message?.slice(0, 200) ?? 'unknown error'
}

/**
 * A client of the hosted service's legacy REST API that keeps to its rules: requests spaced so a
 * minute never holds more than the allowed number, a 403 with X-RateLimit-Reset waited out,
 * network errors and 5xx retried with backoff, a 401 stopping everything. Answers are checked
 * against a schema before anyone uses them.
 */
export class HostedClient {
  private nextAt = 0
  private readonly spacing: number

  constructor (private readonly o: ClientOptions) {
    this.spacing = Math.ceil(60_000 / (o.requestsPerMinute ?? 100))
  }

  /** The answer, checked; undefined on 404 (the thing is not there, or not for this token). */
  async get<T extends TSchema> (path: string, schema: T): Promise<Static<T> | undefined> {
    const url = `${this.o.apiUrl.replace(/\/+$/, '')}${path}`
    const attempts = this.o.attempts ?? 5
    let waits = 0
    for (let attempt = 1; ; attempt++) {
      await this.turn()
      await this.o.onRequest()
      let response: Response
      let text: string
      // A plain timer aborting a controller of this request's own: the event loop holds it, so it
      // fires (an AbortSignal.timeout inside AbortSignal.any can be garbage-collected before it does).
      const timeout = new AbortController()
      const timer = setTimeout(() => timeout.abort(new DOMException('no answer in time', 'TimeoutError')), this.o.timeoutMs ?? 30_000)
      try {
        response = await this.o.fetch(url, {
          headers: { 'x-authentication-token': this.o.token, accept: 'application/json', 'user-agent': 'planning-api-server hosted import' },
          signal: AbortSignal.any([this.o.signal, timeout.signal]),
          redirect: 'error'
        })
        text = await bounded(response, this.o.maxBodyBytes ?? 16 * 1024 * 1024)
      } catch (err) {
        if (this.o.signal.aborted || err instanceof HostedError) throw err
        if (err instanceof HostAddressRefused) throw new HostedError(`the hosted service's address is refused: ${err.message.replace(/^refused: /, '')}`)
        if (attempt >= attempts) throw new HostedError(`GET ${path}: ${reason(err)} (after ${attempt} attempts)`)
        await this.backoff(attempt)
        continue
      } finally {
        clearTimeout(timer)
      }
      if (response.status === 401) throw new HostedAuthError('the hosted service refused the token (401): check it (and its access to these repositories) and start the import again')
      if (response.status === 403 && response.headers.get('x-ratelimit-reset') !== null) {
        if (++waits > 10) throw new HostedError(`GET ${path}: still refused for the rate limit after 10 waits for its reset`)
        const resetMs = Number(response.headers.get('x-ratelimit-reset')) * 1000
        await this.waitUntil(Number.isFinite(resetMs) ? resetMs : Date.now() + 60_000)
        attempt--
        continue
      }
      if (response.status === 404) return undefined
      if (response.status >= 500 || response.status === 429) {
        if (attempt >= attempts) throw new HostedError(`GET ${path}: the hosted service answered ${response.status} (after ${attempt} attempts)`)
        await this.backoff(attempt)
        continue
      }
      if (response.status !== 200) throw new HostedError(`GET ${path}: the hosted service answered ${response.status}`)
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        throw new HostedError(`GET ${path}: the answer is not JSON`)
      }
      // PostgreSQL cannot store a NUL character: refused here, saying where, not at the insert.
      const nul = nulAt(json)
      if (nul !== undefined) throw new HostedError(`GET ${path}: unexpected answer (${nul || '/'}: a text holds a NUL character)`)
      const check = checker(schema)
      if (!check.Check(json)) {
        const first = [...check.Errors(json)][0]
        throw new HostedError(`GET ${path}: unexpected answer (${first === undefined ? 'invalid' : `${first.path || '/'}: ${first.message}`})`)
      }
      return json
    }
  }

  /** Waits for this request's turn: requests are at least 60 s / requestsPerMinute apart. */
  private async turn (): Promise<void> {
    const now = Date.now()
    const at = Math.max(now, this.nextAt)
    this.nextAt = at + this.spacing
    if (at > now) await sleep(at - now, undefined, { signal: this.o.signal })
  }

  private async backoff (attempt: number): Promise<void> {
    await sleep((this.o.backoffMs ?? 1000) * 2 ** (attempt - 1), undefined, { signal: this.o.signal })
  }

  private async waitUntil (resetMs: number): Promise<void> {
    const ms = Math.max(0, resetMs - Date.now()) + 500
    if (ms > (this.o.maxWaitMs ?? 3_600_000)) {
      throw new HostedError(`the hosted rate limit resets at ${new Date(resetMs).toISOString()}, later than the longest wait; start the import again then`)
    }
    await this.o.onWait(Math.ceil(ms / 1000))
    await sleep(ms, undefined, { signal: this.o.signal })
    await this.o.onWaited(Math.ceil(ms / 1000))
    this.nextAt = Date.now() + this.spacing
  }
}
