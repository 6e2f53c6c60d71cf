import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyValidationResult } from 'fastify/types/schema.js'
import fp from 'fastify-plugin'
import { STATUS_CODES } from 'node:http'
import { DomainError } from '../../db/errors.js'
import { isDateTime } from '../../schemas/formats.js'

function validator (coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false })
  addFormats.default(ajv)
  // Every date-time must be one `Date` can hold: a leap second or February 30 is a 400, not a 500.
  ajv.addFormat('date-time', isDateTime)
  return ajv
}

interface Schema { properties?: Record<string, { type?: unknown }> }
type Validate = (data: unknown) => unknown
const DECIMAL = /^(0|[1-9][0-9]*)$/

/**
 * Integers in paths and query strings must be written in plain decimal digits: `0x3ea`, `1002.0`,
 * `1.002e3`, ` 1002` or `01002` would otherwise be coerced to 1002 and reach the same resource.
 */
function canonicalIntegers (part: string, schema: Schema, validate: Validate): Validate {
  const integers = Object.entries(schema.properties ?? {}).filter(([, p]) => p.type === 'integer').map(([name]) => name)
  if (integers.length === 0) return validate
  const checked = (data: unknown) => {
    const values = data as Record<string, unknown> | null
    for (const name of integers) {
      const value = values?.[name]
      if (typeof value === 'string' && !DECIMAL.test(value)) {
        return { error: Object.assign(new Error(`${part}/${name} must be integer, written in decimal digits`), { statusCode: 400 }) }
      }
    }
    return validate(data)
  }
  // Fastify reads the errors of a failed validation from the function itself.
  return Object.defineProperty(checked, 'errors', { get: () => (validate as { errors?: unknown }).errors })
}

/**
 * One error shape for everything the API answers: `{statusCode, error, message}`. Bad input is
 * always a 4xx naming the problem; a 5xx never carries internals to the client.
 */
export default fp(async (fastify) => {
  // Path and query values arrive as strings and are coerced; JSON bodies are taken as typed, so
  // `{"estimate": "5"}` or `{"estimate": 0}` are never silently turned into something else.
  const coercing = validator('array')
  const exact = validator(false)
  fastify.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return exact.compile(schema)
    return canonicalIntegers(httpPart ?? 'params', schema as Schema, coercing.compile(schema)) as FastifyValidationResult
  })

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
    json(request, text, done)
  })

  fastify.setErrorHandler(errorReply)
  fastify.setNotFoundHandler(notFound)
  fastify.addHook('onSend', closeAfterUnreadBody)
}, { name: 'planning-errors', fastify: '5.x' })

/** The one error shape; a 5xx never carries internals. */
export async function errorReply (err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Domain errors (the data layer's refusals) carry their status; validation is always a 400.
  const status = err instanceof DomainError ? err.statusCode : err.validation !== undefined ? 400 : err.statusCode ?? 500
  if (status >= 500) {
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
export async function closeAfterUnreadBody (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (reply.statusCode >= 400 && !request.raw.complete) reply.header('connection', 'close')
}
