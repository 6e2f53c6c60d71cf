import type { FastifyRequest } from 'fastify'
import { randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Reads the server makes of itself on a person's behalf (the board page's live stream compares
 * what the page would read): they carry the person's own credential, so they see exactly what the
 * page would, and this header with a secret that never leaves the process, so the rate limit does
 * not count them twice.
 */
export const INTERNAL_HEADER = 'x-planning-internal'
const secret = randomBytes(32)
export const internalHeaderValue = secret.toString('hex')

export function isInternalRead (request: FastifyRequest): boolean {
  const value = request.headers[INTERNAL_HEADER]
  if (typeof value !== 'string' || value.length !== internalHeaderValue.length) return false
  return timingSafeEqual(Buffer.from(value), Buffer.from(internalHeaderValue))
}
