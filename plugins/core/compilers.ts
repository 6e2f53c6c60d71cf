import { createHash } from 'node:crypto'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type Serializer = (doc: unknown) => string
type SerializerFactory = ReturnType<typeof SerializerSelector>

// Compiling every route's schemas is most of what building the app costs. Apps built in one
// process (the tests build hundreds) share the response serializers, kept by schema, shared
// schemas and options as written when compiled (the validators: see validation.ts).
const serializerSelector = SerializerSelector()
const serializers = new WeakMap<object, Map<string, Serializer>>()
const digest = (text: string): string => createHash('sha1').update(text).digest('base64')

const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = serializerSelector(externalSchemas, options)
  const shared = digest(`${JSON.stringify(externalSchemas ?? {})}\u0000${JSON.stringify(options ?? {})}`)
  return (route) => {
    const schema = route.schema
    if (typeof schema !== 'object' || schema === null) return compile(route)
    const key = `${shared} ${digest(JSON.stringify(schema))}`
    const kept = serializers.get(schema) ?? new Map<string, Serializer>()
    serializers.set(schema, kept)
    let serializer = kept.get(key)
    if (serializer === undefined) {
      serializer = compile(route)
      kept.set(key, serializer)
    }
    return serializer
  }
}

/** Fastify's `schemaController.compilersFactory` for the apps `buildApp` makes. */
export const sharedCompilers = { buildSerializer }
