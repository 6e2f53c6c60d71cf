import { FormatRegistry } from '@sinclair/typebox'

// ISO 8601 / RFC 3339 date-time with a zone, the form Fastify's ajv-formats also accepts.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/

export function isDateTime (value: string): boolean {
  return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
}

/** Formats used outside Fastify's validator (fixtures read from files by the server and CLI). */
export function registerFormats (): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime)
}
