import type { WebSocket } from 'ws'
import type { ChatEvent } from '../../db/chat/repository.js'

/** A client whose unsent frames pass this many bytes is dropped rather than slowing the others. */
const MAX_BUFFERED = 1024 * 1024

export const CLOSE_UNAUTHORIZED = 4001
export const CLOSE_TOO_SLOW = 4008

/** Events held for a socket whose welcome is not sent yet; a set-up that takes longer drops it. */
const MAX_HELD_EVENTS = 10_000

export interface Client {
  socket: WebSocket
  lastSeq: number
  moderator: boolean
  /** events published while the socket was being set up (see `start`), else null */
  held: ChatEvent[] | null
}

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
  /** while a catch-up reads the store: what is published meanwhile, handed out after it */
  private holding: ChatEvent[][] | null = null
  private holds = 0

  get size (): number {
    return this.clients.size
  }

  get all (): Iterable<Client> {
    return this.clients
  }

  has (client: Client): boolean {
    return this.clients.has(client)
  }

  /** Holds what is published until as many `release` calls (a catch-up from the store is under way). */
  hold (): void {
    this.holds++
    this.holding ??= []
  }

  release (): void {
    if (--this.holds > 0) return
    this.holds = 0
    const held = this.holding ?? []
    this.holding = null
    for (const events of held) this.publish(events)
  }

  /**
   * `moderator`: the client's user was a moderator or the broadcaster when it connected. Without
   * `lastSeq`, what is published is held until `start` says where the client's feed begins, so
   * nothing committed between reading the latest `seq` and the welcome is missed.
   */
  add (socket: WebSocket, lastSeq?: number, moderator = false): Client {
    const client: Client = { socket, lastSeq: lastSeq ?? 0, moderator, held: lastSeq === undefined ? [] : null }
    this.clients.add(client)
    socket.on('close', () => this.clients.delete(client))
    return client
  }

  /** The client's feed begins after `lastSeq`: what was held meanwhile and is newer goes out. */
  start (client: Client, lastSeq: number): void {
    const held = client.held ?? []
    client.held = null
    client.lastSeq = lastSeq
    this.deliver(client, held)
  }

  /** Sends events the client has not had yet (by seq) and may see, dropping it if it cannot keep up. */
  deliver (client: Client, events: ChatEvent[]): void {
    if (client.held !== null) {
      if (client.held.length + events.length > MAX_HELD_EVENTS) this.drop(client)
      else client.held.push(...events)
      return
    }
    for (const event of events) {
      if (event.seq <= client.lastSeq) continue
      if (!client.moderator && forModerators(event.type)) {
        client.lastSeq = event.seq
        continue
      }
      if (client.socket.bufferedAmount > MAX_BUFFERED) {
        this.drop(client)
        return
      }
      client.socket.send(frame(event))
      client.lastSeq = event.seq
    }
  }

  private drop (client: Client): void {
    this.clients.delete(client)
    client.socket.close(CLOSE_TOO_SLOW, 'client too slow')
    client.socket.terminate()
  }

  publish (events: ChatEvent[]): void {
    if (events.length === 0) return
    if (this.holding !== null) {
      this.holding.push(events)
      return
    }
    for (const client of this.clients) this.deliver(client, events)
  }

  closeAll (code: number, reason: string): void {
    for (const client of this.clients) client.socket.close(code, reason)
    this.clients.clear()
  }
}
