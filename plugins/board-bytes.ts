import type { FastifyReply } from 'fastify'
import type { Board } from '../db/boards.js'
import { SerializedAnswer } from './core/read-cache.js'

/** Each pipeline's JSON, kept while its object lives: the board model gives the same object until its cards change. */
const slices = new WeakMap<object, string>()

/**
 * A whole board's JSON made from its pipelines' JSON, each serialized by the route's response
 * schema once (as a board of that pipeline alone, without the wrapping) and kept: after a write
 * only the pipelines it changed are serialized again. The bytes are those of serializing the
 * board at once; should the schema's serializer ever wrap a pipeline otherwise, it does just that.
 */
export function boardJson (reply: FastifyReply, board: Board): SerializedAnswer {
  const empty = reply.serialize({ pipelines: [] }) as string
  const head = empty.slice(0, -2)
  const tail = empty.slice(-2)
  const parts: string[] = []
  for (const pipeline of board.pipelines) {
    let json = slices.get(pipeline)
    if (json === undefined) {
      const alone = reply.serialize({ pipelines: [pipeline] }) as string
      if (tail !== ']}' || !alone.startsWith(head) || !alone.endsWith(tail)) return new SerializedAnswer(reply.serialize(board) as string)
      json = alone.slice(head.length, -tail.length)
      slices.set(pipeline, json)
    }
    parts.push(json)
  }
  return new SerializedAnswer(`${head}${parts.join(',')}${tail}`)
}
