import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchema, FastifySchemaCompiler, RouteOptions, preValidationAsyncHookHandler } from 'fastify'
import type { FastifyValidationResult } from 'fastify/types/schema.js'
import { isDateTime, nulAt } from '../../schemas/formats.js'

function ajv (coerceTypes: Options['coerceTypes']): Ajv {
  const instance = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false })
  addFormats.default(instance)
  // Every date-time must be one `Date` can hold: a leap second or February 30 is a 400, not a 500.
  instance.addFormat('date-time', isDateTime)
  return instance
}

interface Schema { properties?: Record<string, { type?: unknown }> }
type Validate = (data: unknown) => unknown
const DECIMAL = /^(0|[1-9][0-9]*)$/

const refusal = (message: string) => ({ error: Object.assign(new Error(message), { statusCode: 400 }) })

/**
 * How deep a JSON body may nest: the deepest the API takes is a few levels, and a host's webhook
 * payload about ten. A deeper body is refused before anything walks it.
 */
export const MAX_JSON_DEPTH = 64

/** Whether a parsed JSON value nests deeper than `limit` levels (walked without recursion). */
export function nestsDeeperThan (value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (depth >= limit) return true
    for (const key in node) stack.push([(node as Record<string, unknown>)[key], depth + 1])
  }
  return false
}

/**
 * Checks that come before the schema's: integers in paths and query strings must be plain decimal
 * digits (`0x3ea`, `1002.0`, `1.002e3`, ` 1002` or `01002` would otherwise be coerced to 1002 and
 * reach the same resource), and no text may hold a NUL character (PostgreSQL cannot store one).
 */
function guarded (part: string, schema: Schema, validate: Validate): Validate {
  const integers = part === 'body' ? [] : Object.entries(schema.properties ?? {}).filter(([, p]) => p.type === 'integer').map(([name]) => name)
  const checked = (data: unknown) => {
    const values = data as Record<string, unknown> | null
    for (const name of integers) {
      const value = values?.[name]
      if (typeof value === 'string' && !DECIMAL.test(value)) return refusal(`${part}/${name} must be integer, written in decimal digits`)
    }
    const nul = nulAt(data)
    if (nul !== undefined) return refusal(`${part}${nul} must not contain NUL characters`)
    return validate(data)
  }
  // Fastify reads the errors of a failed validation from the function itself.
  return Object.defineProperty(checked, 'errors', { get: () => (validate as { errors?: unknown }).errors })
}

// One pair for the apps buildApp makes in this process: Ajv keeps what it compiled by schema, so
// an app built again (the tests build hundreds) does not compile its routes again. A host's scope
// gets a pair of its own, as its own routes compile into it too.
let shared: { coercing: Ajv, exact: Ajv } | undefined

/**
 * The validator compiler: path and query values arrive as strings and are coerced; JSON bodies
 * are taken as typed, so `{"estimate": "5"}` or `{"estimate": 0}` are never turned into something else.
 */
export function validatorCompiler (shareable = false): FastifySchemaCompiler<FastifySchema> {
  const own = shareable ? undefined : { coercing: ajv('array'), exact: ajv(false) }
  return ({ schema, httpPart }) => {
    const { coercing, exact } = own ?? (shared ??= { coercing: ajv('array'), exact: ajv(false) })
    const part = httpPart ?? 'params'
    const validate = (part === 'body' ? exact : coercing).compile(schema)
    return guarded(part, schema as Schema, validate) as FastifyValidationResult
  }
}

/**
 * An `onRoute` hook for the APIs of our own (the admin API): a body property the route's schema
 * does not name is a 400 naming it, where the validator would drop it silently, so
 * `PATCH /admin/workspaces/:id {"repositories": […]}` is refused rather than a 200 that changed
 * nothing. The hosted API keeps dropping them: its clients send fields of their own.
 */
export function refuseUnknownProperties (route: RouteOptions): void {
  const body = (route.schema as { body?: { properties?: Record<string, unknown>, additionalProperties?: unknown } } | undefined)?.body
  if (body?.properties === undefined || body.additionalProperties !== false) return
  const known = new Set(Object.keys(body.properties))
  const check: preValidationAsyncHookHandler = async (request) => {
    const given = request.body
    if (typeof given !== 'object' || given === null || Array.isArray(given)) return
    for (const key of Object.keys(given)) {
      if (known.has(key)) continue
      const name = key.length > 60 ? `${key.slice(0, 60).replace(/[^\w.-]/g, '?')}…` : key.replace(/[^\w.-]/g, '?')
      throw Object.assign(new Error(`body/${name} is not a property of this request (it takes ${[...known].join(', ')})`), { statusCode: 400 })
    }
  }
  const before = route.preValidation
  route.preValidation = before === undefined ? check : [...(Array.isArray(before) ? before : [before]), check]
}
