import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { PlanningMetrics } from './metrics.js'
import { nextRequestId } from './request-ids.js'

/**
 * Answers a request before routing, or returns false to leave it to Fastify. It may also take the
 * request (true) and hand it to `routed` later, when it finds it cannot answer after all.
 */
export type FrontAnswer = (req: IncomingMessage, res: ServerResponse, routed: RequestListener) => boolean

/**
 * The standalone server's front (docs/development.md, "Reads answered before routing"): the read cache
 * answers unchanged board and issue-data reads here, and the GraphQL door its kept answers, before
 * Fastify routes them, once the routes have answered the same request. Empty until the app is
 * ready, and again from preClose.
 */
export class ServerFront {
  private answers: FrontAnswer[] = []

  /** Asks `answer` first from now on (after those added before it). */
  use (answer: FrontAnswer): void {
    if (!this.answers.includes(answer)) this.answers = [...this.answers, answer]
  }

  drop (answer: FrontAnswer): void {
    this.answers = this.answers.filter((a) => a !== answer)
  }

  /** Puts the front before the handler Fastify gave the server (its only 'request' listener). */
  attach (server: Server): void {
    const listeners = server.listeners('request') as RequestListener[]
    if (listeners.length !== 1) throw new Error(`the server's front expects one request listener, found ${listeners.length}`)
    const routed = listeners[0]!
    server.removeListener('request', routed)
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      for (const answer of this.answers) if (answer(req, res, routed)) return
      routed(req, res)
    })
  }
}

/** Log levels below info, where more than the request's two lines may be written: every request takes the routes. */
const DETAILED_LOG_LEVELS = new Set(['debug', 'trace'])

/**
 * What an answer before routing owes the request log and the metrics: at info, the two lines
 * Fastify writes for a request, under an id from the same count; the request's time by route.
 * `ready()` (onReady: the metrics are registered after the front's users) says whether a front
 * may answer at all: not when the log is at debug or trace.
 */
export class FrontRecord {
  private timed: PlanningMetrics['requestTimed'] = null
  private log: FastifyBaseLogger | null = null

  /** `what` names the answers in the log's complaint ("a read", "a GraphQL read") */
  constructor (private readonly fastify: FastifyInstance, private readonly what: string) {}

  ready (): boolean {
    const { fastify } = this
    this.timed = fastify.hasDecorator('planningMetrics') ? fastify.planningMetrics.requestTimed : null
    const level = (fastify.log as { level?: string }).level ?? 'silent'
    this.log = level === 'info' ? fastify.log : null
    return !DETAILED_LOG_LEVELS.has(level)
  }

  /** Whether the log names the client's address: behind a proxy that is the routes' to work out. */
  get logging (): boolean { return this.log !== null }

  /** When the request started (0 when nothing will be timed or logged) and its address, read now. */
  start (req: IncomingMessage): { started: number, ip: string | undefined } {
    return {
      started: this.timed === null && this.log === null ? 0 : performance.now(),
      // By the time the answer is logged the socket may be closed, its address gone.
      ip: this.log === null ? undefined : req.socket.remoteAddress
    }
  }

  /**
   * Times and logs an answer once it is written ('finish', as Fastify does). A throw here (a
   * failing log, say) goes no further: the answer is sent, and there is nothing left to answer.
   */
  finishing (req: IncomingMessage, res: ServerResponse, route: string, at: { started: number, ip: string | undefined }): void {
    if (at.started === 0) return
    res.once('finish', () => {
      try {
        const ms = performance.now() - at.started
        this.timed?.(req.method!, route, 200, ms / 1000)
        if (this.log !== null) {
          const line = this.log.child({ reqId: nextRequestId() })
          // What the server's `req` serializer reads: no query string here, and no proxy's address.
          line.info({ req: { method: req.method, url: req.url, ip: at.ip } }, 'incoming request')
          line.info({ res: { statusCode: 200 }, responseTime: ms }, 'request completed')
        }
      } catch (err) {
        try {
          this.fastify.log.error({ err }, `logging ${this.what} answered before routing failed`)
        } catch {
          // The log itself is failing: nowhere left to say so.
        }
      }
    })
  }
}
