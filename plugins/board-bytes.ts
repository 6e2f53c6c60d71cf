import type { FastifyReply } from 'fastify'
import { createHash } from 'node:crypto'
import type { Board } from '../db/boards.js'
import { SerializedAnswer } from './core/read-cache.js'

interface Slice { bytes: Buffer, digest: Buffer }

/** Each pipeline's JSON and its digest, kept while its object lives: the board model gives the same object until its cards change. */
const slices = new WeakMap<object, Slice>()
const COMMA = Buffer.from(',')

/**
 * A whole board's JSON made from its pipelines' JSON, each serialized by the route's response
 * schema once (as a board of that pipeline alone, without the wrapping) and kept as bytes: after
 * a write only the pipelines it changed are serialized and encoded again, and the rest is a copy.
 * The bytes are those of serializing the board at once (should the schema's serializer ever wrap
 * a pipeline otherwise, it does just that). The tag is a digest of the pipelines' digests: it
 * changes with any byte, and the same bytes always give the same tag.
 */
export function boardJson (reply: FastifyReply, board: Board): SerializedAnswer {
  const empty = reply.serialize({ pipelines: [] }) as string
  const head = empty.slice(0, -2)
  const tail = empty.slice(-2)
  const parts: Buffer[] = [Buffer.from(head)]
  const tag = createHash('sha1').update(empty)
  for (const [index, pipeline] of board.pipelines.entries()) {
    let slice = slices.get(pipeline)
    if (slice === undefined) {
      const alone = reply.serialize({ pipelines: [pipeline] }) as string
      if (tail !== ']}' || !alone.startsWith(head) || !alone.endsWith(tail)) return new SerializedAnswer(Buffer.from(reply.serialize(board) as string), undefined, true)
      const bytes = Buffer.from(alone.slice(head.length, -tail.length))
      slice = { bytes, digest: createHash('sha1').update(bytes).digest() }
      slices.set(pipeline, slice)
    }
    if (index > 0) parts.push(COMMA)
    parts.push(slice.bytes)
    tag.update(slice.digest)
  }
  parts.push(Buffer.from(tail))
  return new SerializedAnswer(Buffer.concat(parts), `"${tag.digest('base64url').slice(0, 22)}"`, true)
}
