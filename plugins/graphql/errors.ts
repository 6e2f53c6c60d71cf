import type { FastifyRequest } from 'fastify'
import { GraphQLError, type ExecutionResult } from 'graphql'
import { DomainError } from '../../db/errors.js'
import { isDatabaseUnavailable } from '../../db/engine/engine.js'

/**
 * The one place where errors become GraphQL errors: domain errors (db/errors.ts) get their
 * `extensions.code`; anything else is an internal error, logged, never shown.
 */
export function codeOf (err: unknown): string {
  if (err instanceof DomainError) {
    switch (err.statusCode) {
      case 404: return 'NOT_FOUND'
      case 403: return 'FORBIDDEN'
      case 400: return 'BAD_USER_INPUT'
      case 409: return 'NOT_UNIQUE'
      default: return 'HOST_UNAVAILABLE'
    }
  }
  if (isDatabaseUnavailable(err)) return 'SERVICE_UNAVAILABLE'
  return 'INTERNAL_SERVER_ERROR'
}

const MAX_MESSAGE = 500

function formatOne (error: GraphQLError, request: FastifyRequest): Record<string, unknown> {
  const original = error.originalError
  // Errors of the document itself (syntax, validation, variables, limits) carry no original error.
  if (original === undefined || original === null || original instanceof GraphQLError) {
    const code = error.extensions?.code ?? (error.path === undefined ? 'GRAPHQL_VALIDATION_FAILED' : 'BAD_USER_INPUT')
    return { ...error.toJSON(), extensions: { ...error.extensions, code } }
  }
  const code = codeOf(original)
  const json = error.toJSON()
  if (code === 'INTERNAL_SERVER_ERROR' || code === 'SERVICE_UNAVAILABLE') {
    request.log.error({ err: original }, 'GraphQL resolver failed')
    const message = code === 'SERVICE_UNAVAILABLE' ? 'the database is unavailable; retry later' : `internal error (request ${request.id}); see the server log`
    return { ...json, message, extensions: { code } }
  }
  // A message may name what the request gave (an id, a name): never more than a few lines of it.
  const message = original.message.length > MAX_MESSAGE ? `${original.message.slice(0, MAX_MESSAGE)}…` : original.message
  return { ...json, message, extensions: { code } }
}

/** The answer to a request: always HTTP 200, errors with a code. */
export function formatResult (result: ExecutionResult, request: FastifyRequest): Record<string, unknown> {
  if (result.errors === undefined || result.errors.length === 0) return { data: result.data ?? null }
  return { data: result.data ?? null, errors: result.errors.map((e) => formatOne(e, request)) }
}

/** Errors thrown before execution (syntax, validation, limits, variables): no data. */
export function documentErrors (errors: readonly Error[]): Record<string, unknown> {
  return {
    data: null,
    errors: errors.map((e) => {
      const error = e instanceof GraphQLError ? e : new GraphQLError(e.message)
      const code = error.extensions?.code ?? (/Syntax Error/.test(error.message) ? 'GRAPHQL_PARSE_FAILED' : /Variable/.test(error.message) ? 'BAD_USER_INPUT' : 'GRAPHQL_VALIDATION_FAILED')
      return { ...error.toJSON(), extensions: { ...error.extensions, code } }
    })
  }
}
