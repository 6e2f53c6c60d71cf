import type { Connection } from '../db/issue-host/connections.js'
import { HostUnavailable, Invalid } from '../db/errors.js'

/** The host answered, but not with success: its status and a short reason, never its whole body. */
export class HostAnswer extends HostUnavailable {
  constructor (readonly status: number, reason: string, private readonly headers: Headers) {
    super(`the issue host answered ${status}${reason === '' ? '' : `: ${reason}`}`)
  }

  /** How long the host asks us to wait (a spent or secondary rate limit), if it does. */
  rateLimitWaitMs (): number | undefined {
    if (this.status !== 403 && this.status !== 429) return undefined
    const retryAfter = Number(this.headers.get('retry-after'))
    if (Number.isFinite(retryAfter) && retryAfter > 0) return retryAfter * 1000
    if (this.headers.get('x-ratelimit-remaining') === '0') {
      const reset = Number(this.headers.get('x-ratelimit-reset'))
      if (Number.isFinite(reset)) return Math.max(0, reset * 1000 - Date.now()) + 1000
    }
    return undefined
  }
}

/** A host's error message, cut short and stripped of control characters. */
function reasonOf (text: string): string {
  let message = ''
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    if (typeof parsed.message === 'string') message = parsed.message
  } catch {}
  // eslint-disable-next-line no-control-regex
  return message.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 200)
}

/**
 * One path segment of a host request, escaped. A segment made only of dots is refused: URL parsing
 * collapses `.` and `..` even escaped, so a label `..` would make `DELETE …/issues/1/labels/..`
 * into `DELETE …/issues/1/` (and `.` into removing every label).
 */
export function pathSegment (value: string, what: string): string {
  if (/^\.*$/.test(value)) throw new Invalid(`${what} '${value}' cannot name a host resource: it is empty or made only of dots`)
  return encodeURIComponent(value)
}

export interface HostRequest {
  connection: Connection
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** under the connection's API address, e.g. `/repos/o/r/issues` */
  path: string
  body?: unknown
  fetch?: typeof fetch
  timeoutMs?: number
  /** one budget shared by the calls of one operation (labels read, then the write): bounds this call instead of timeoutMs */
  deadline?: AbortSignal
  /** statuses that count as success besides 2xx (a DELETE of what is gone: 404) */
  allow?: number[]
}

const MAX_ANSWER_BYTES = 1024 * 1024

/**
 * One call to the issue host's REST API (GitHub's, or Gitea's and Forgejo's compatible one) with
 * the connection's token: JSON in and out, bounded in time and size. A refusal is a `HostAnswer`
 * (502 with the host's status and message); no answer is a `HostUnavailable` (502, or 504 when it
 * timed out).
 */
export async function hostRequest<T = unknown> (request: HostRequest): Promise<T | undefined> {
  const { connection } = request
  const url = `${connection.api_url.replace(/\/$/, '')}${request.path}`
  let response: Response
  try {
    response = await (request.fetch ?? fetch)(url, {
      method: request.method,
      headers: {
        accept: 'application/vnd.github+json, application/json',
        'user-agent': 'planning-api-server',
        ...(connection.token === null ? {} : { authorization: `Bearer ${connection.token}` }),
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' })
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      redirect: 'error',
      signal: request.deadline ?? AbortSignal.timeout(request.timeoutMs ?? 5000)
    })
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError'
    throw new HostUnavailable(`the issue host ${timedOut ? 'did not answer in time' : 'could not be reached'}`, timedOut)
  }
  const text = await readBounded(response)
  if (!response.ok && !(request.allow ?? []).includes(response.status)) throw new HostAnswer(response.status, reasonOf(text), response.headers)
  if (text === '' || !response.ok) return undefined
  try {
    return JSON.parse(text) as T
  } catch {
    throw new HostAnswer(response.status, 'not JSON', response.headers)
  }
}

async function readBounded (response: Response): Promise<string> {
  if (response.body === null) return ''
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_ANSWER_BYTES) throw new HostUnavailable('the issue host\'s answer is too large')
    chunks.push(Buffer.from(chunk))
  }
  return Buffer.concat(chunks).toString('utf8')
}
