import t from 'tap'
import { EventEmitter } from 'node:events'
import type { WebSocket } from 'ws'
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
