const MAX_ID = 2147483647
let last = 0

/**
 * The standalone server's request ids, in Fastify's own form (req-1, req-2, … in base 36): Fastify
 * takes them through `genReqId`, and reads answered before routing take theirs from the same
 * count, so no two lines of the request log share an id.
 */
export function nextRequestId (): string {
  last = (last + 1) & MAX_ID
  return `req-${last.toString(36)}`
}
