import type { WebSocket } from 'ws'
import type { ChatEvent } from '../../db/chat.js'

/** A client whose unsent frames pass this many bytes is dropped rather than slowing the others. */
const MAX_BUFFERED = 1024 * 1024

export const CLOSE_UNAUTHORIZED = 4001
export const CLOSE_TOO_SLOW = 4008

interface Client { socket: WebSocket, lastSeq: number, moderator: boolean }

/** Feed events only moderators receive: the queue, filters, timers and permits. */
const MODERATOR_EVENTS = ['held.', 'filter.', 'timer.', 'permit.']
export const forModerators = (type: string): boolean => MODERATOR_EVENTS.some((prefix) => type.startsWith(prefix))

// Each event is serialized once, however many clients receive it.
const serialized = new WeakMap<ChatEvent, string>()
function frame (event: ChatEvent): string {
  let json = serialized.get(event)
  if (json === undefined) {
    json = JSON.stringify(event)
    serialized.set(event, json)
  }
  return json
}

/** Fans committed chat events out to the live WebSocket clients. */
export class ChatHub {
  private readonly clients = new Set<Client>()

  get size (): number {
    return this.clients.size
  }

  /** `moderator`: the client's user was a moderator or the broadcaster when it connected. */
  add (socket: WebSocket, lastSeq: number, moderator = false): Client {
    const client = { socket, lastSeq, moderator }
    this.clients.add(client)
    socket.on('close', () => this.clients.delete(client))
    return client
  }

  /** Sends events the client has not had yet (by seq) and may see, dropping it if it cannot keep up. */
  deliver (client: Client, events: ChatEvent[]): void {
    for (const event of events) {
      if (event.seq <= client.lastSeq) continue
      if (!client.moderator && forModerators(event.type)) {
        client.lastSeq = event.seq
        continue
      }
      if (client.socket.bufferedAmount > MAX_BUFFERED) {
        this.clients.delete(client)
        client.socket.close(CLOSE_TOO_SLOW, 'client too slow')
        client.socket.terminate()
        return
      }
      client.socket.send(frame(event))
      client.lastSeq = event.seq
    }
  }

  publish (events: ChatEvent[]): void {
    if (events.length === 0) return
    for (const client of this.clients) this.deliver(client, events)
  }

  closeAll (code: number, reason: string): void {
    for (const client of this.clients) client.socket.close(code, reason)
    this.clients.clear()
  }
}
