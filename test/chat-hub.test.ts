import t from 'tap'
import { EventEmitter } from 'node:events'
import type { WebSocket } from 'ws'
import type { FastifyBaseLogger } from 'fastify'
import type { ChatRepository } from '../db/chat/repository.js'
import { catchUp } from '../plugins/chat/catch-up.js'
import { ChatHub, CLOSE_TOO_SLOW } from '../plugins/chat/hub.js'

class FakeSocket extends EventEmitter {
  sent: string[] = []
  closedWith: number | null = null
  terminated = false
  constructor (public bufferedAmount = 0) { super() }
  send (data: string) { this.sent.push(data) }
  close (code: number) { this.closedWith = code }
  terminate () { this.terminated = true }
}

t.test('a client that falls behind is dropped; the others keep receiving', async (t) => {
  const hub = new ChatHub()
  const quick = new FakeSocket()
  const slow = new FakeSocket(2 * 1024 * 1024)
  hub.add(quick as unknown as WebSocket, 0)
  hub.add(slow as unknown as WebSocket, 0)
  hub.publish([{ seq: 1, type: 'message.created', data: { text: 'hi' } }])
  t.equal(slow.closedWith, CLOSE_TOO_SLOW)
  t.ok(slow.terminated)
  t.equal(hub.size, 1)
  hub.publish([{ seq: 2, type: 'message.created', data: { text: 'again' } }])
  t.same(quick.sent.map((f) => JSON.parse(f).seq), [1, 2])
  t.same(slow.sent, [])
})

t.test('events a client already has are not sent twice', async (t) => {
  const hub = new ChatHub()
  const socket = new FakeSocket()
  const client = hub.add(socket as unknown as WebSocket, 5)
  hub.deliver(client, [4, 5, 6, 7].map((seq) => ({ seq, type: 'x', data: null })))
  t.same(socket.sent.map((f) => JSON.parse(f).seq), [6, 7])
  socket.emit('close')
  t.equal(hub.size, 0, 'closed sockets leave the hub')
})

t.test('a catch-up reads the store from each socket\'s last seq, holds live events meanwhile, and is bounded', async (t) => {
  const hub = new ChatHub()
  const behind = new FakeSocket()
  const ahead = new FakeSocket()
  hub.add(behind as unknown as WebSocket, 0)
  hub.add(ahead as unknown as WebSocket, 15)
  const stored = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, type: 'message.created', data: null }))
  const reads: number[] = []
  const repo = {
    async eventsAfter (seq: number, limit: number) {
      reads.push(seq)
      if (reads.length === 1) hub.publish([stored[99]]) // a live event while the store is read: held
      return stored.filter((e) => e.seq > seq).slice(0, limit)
    }
  }
  const log = { warn: () => {} }
  await catchUp(repo as unknown as ChatRepository, hub, 2, log as unknown as FastifyBaseLogger)()
  const seqs = (socket: FakeSocket) => socket.sent.map((f) => JSON.parse(f).seq as number | undefined)
  t.same(reads, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18], 'ten pages at most')
  t.same(seqs(behind), [...Array.from({ length: 20 }, (_, i) => i + 1), undefined, 100], 'in order, then where to resume from, then the held live event')
  t.same(JSON.parse(behind.sent[20]), { type: 'resume_more', after_seq: 20 })
  t.same(seqs(ahead), [16, 17, 18, 19, 20, undefined, 100], 'nothing it had already')
})
