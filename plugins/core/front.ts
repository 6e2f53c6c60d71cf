import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'

/**
 * Answers a request before routing, or returns false to leave it to Fastify. It may also take the
 * request (true) and hand it to `routed` later, when it finds it cannot answer after all.
 */
export type FrontAnswer = (req: IncomingMessage, res: ServerResponse, routed: RequestListener) => boolean

/**
 * The standalone server's front (docs/development.md, "Reads answered before routing"): the read cache
 * answers unchanged board and issue-data reads here, before Fastify routes them, once it has
 * answered the same URL through the routes. Empty until the app is ready, and again from preClose.
 */
export class ServerFront {
  answer: FrontAnswer | undefined

  /** Puts the front before the handler Fastify gave the server (its only 'request' listener). */
  attach (server: Server): void {
    const listeners = server.listeners('request') as RequestListener[]
    if (listeners.length !== 1) throw new Error(`the server's front expects one request listener, found ${listeners.length}`)
    const routed = listeners[0]!
    server.removeListener('request', routed)
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const answer = this.answer
      if (answer === undefined || !answer(req, res, routed)) routed(req, res)
    })
  }
}
