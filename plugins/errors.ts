import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyError } from 'fastify'
import fp from 'fastify-plugin'
import { STATUS_CODES } from 'node:http'

function validator (coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false })
  addFormats.default(ajv)
  return ajv
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
  fastify.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? exact : coercing).compile(schema))

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

  fastify.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.validation !== undefined ? 400 : err.statusCode ?? 500
    if (status >= 500) {
      request.log.error({ err }, 'request failed')
      return reply.status(500).send({
        statusCode: 500,
        error: 'Internal Server Error',
        message: `internal error (request ${request.id}); see the server log`
      })
    }
    return reply.status(status).send({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message: err.message })
  })

  fastify.setNotFoundHandler((request, reply) => {
    return reply.status(404).send({
      statusCode: 404,
      error: 'Not Found',
      message: `no route ${request.method} ${request.url.split('?')[0]}`
    })
  })
}, { name: 'planning-errors', fastify: '5.x' })
