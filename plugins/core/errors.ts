import type { FastifyError, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { isDatabaseUnavailable } from '../../db/engine/engine.js'
import { DomainError } from '../../db/errors.js'
import { MAX_JSON_DEPTH, nestsDeeperThan, validatorCompiler } from './validation.js'

/**
 * One error shape for everything the API answers: `{statusCode, error, message}`. Bad input is
 * always a 4xx naming the problem; a 5xx never carries internals to the client.
 */
export default fp<{ sharedValidators?: boolean }>(async (fastify, opts) => {
  fastify.setValidatorCompiler(validatorCompiler(opts.sharedValidators === true))

  // JSON only (as the hosted API): no text/plain parser, so other bodies get 415. An empty body
  // with a JSON content type is accepted as "no body" (clients send one on path-only POSTs).
  fastify.removeContentTypeParser(['application/json', 'text/plain'])
  const json = fastify.getDefaultJsonParser('error', 'error')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString()
    if (text.trim() === '') {
      done(null, undefined)
      return
    }
    json(request, text, (err, parsed) => {
      if (err === null && nestsDeeperThan(parsed)) {
        done(Object.assign(new Error(`body nests deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 }), undefined)
        return
      }
      done(err, parsed)
    })
  })

  fastify.setErrorHandler(errorReply)
  fastify.setNotFoundHandler(notFound)
  fastify.addHook('onSend', closeAfterUnreadBody)
  fastify.addHook('onResponse', endRefusedUpgrade)
}, { name: 'planning-errors', fastify: '5.x' })

/** Seconds a client is asked to wait when the database is out of reach (docs/scale-out.md, "When a store goes away"). */
export const RETRY_AFTER_SECONDS = 5

/** The one error shape; a 5xx never carries internals. */
export async function errorReply (err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // The database restarting, stopped or hung: worth a retry, not an internal error.
  if (isDatabaseUnavailable(err)) {
    // Once, then at most once a minute (plugins/core/database.ts), not on every request of an outage.
    const warn = (request.server as { planningDatabaseUnavailable?: (err: unknown) => void }).planningDatabaseUnavailable
    if (warn !== undefined) warn(err)
    else request.log.warn({ err: { message: err.message, code: err.code } }, 'database unavailable')
    return await reply.status(503).header('retry-after', RETRY_AFTER_SECONDS).send({
      statusCode: 503,
      error: 'Service Unavailable',
      message: `the database is unavailable; retry after ${RETRY_AFTER_SECONDS} s`
    })
  }
  // Domain errors (the data layer's refusals) carry their status; validation is always a 400.
  const status = err instanceof DomainError ? err.statusCode : err.validation !== undefined ? 400 : err.statusCode ?? 500
  // A domain error's 5xx (an issue host that refused or hung) says what happened, never more.
  if (status >= 500 && !(err instanceof DomainError)) {
    request.log.error({ err }, 'request failed')
    return await reply.status(500).send({
      statusCode: 500,
      error: 'Internal Server Error',
      message: `internal error (request ${request.id}); see the server log`
    })
  }
  return await reply.status(status).send({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message: err.message })
}

/** 404 in the error shape, naming the path only (a query string may hold a token). */
export async function notFound (request: FastifyRequest, reply: FastifyReply) {
  return await reply.status(404).send({
    statusCode: 404,
    error: 'Not Found',
    message: `no route ${request.method} ${request.url.split('?')[0]}`
  })
}

/**
 * An error answered before the request body was read (a 401 to a slow upload, say) closes the
 * connection: the rest of the body is never read, so a slow client cannot keep the socket.
 */
export function closeAfterUnreadBody (request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: HookHandlerDoneFunction): void {
  if (reply.statusCode >= 400 && !request.raw.complete) reply.header('connection', 'close')
  done()
}

/**
 * An upgrade request (the chat live feed) answered in plain HTTP (a 401, 403 or 503 before the feed
 * took it): the socket was handed over for the upgrade and is no longer the HTTP server's to close,
 * so it is ended here; otherwise it stays open, half-closed, and holds up the server's close.
 */
export function endRefusedUpgrade (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.raw.headers.upgrade !== undefined) (request.raw.socket as Socket | null)?.destroySoon()
  done()
}
