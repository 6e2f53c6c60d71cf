import type { FastifyBaseLogger } from 'fastify'
import type { ChatRepository } from '../../db/chat/repository.js'
import type { ChatHub } from './hub.js'

/** Pages one catch-up reads at most; a socket still behind after them is told to resume. */
const MAX_PAGES = 10

/**
 * Brings this instance's open sockets up to date from the store, each from the last seq it was
 * sent, in order and without repeats: after a Redis outage (what other instances committed
 * meanwhile never came through the fan-out), and, during one, in place of handing this instance's
 * own events out live (a socket would get them before the others' earlier ones it still misses).
 * Live events arriving meanwhile are held and handed out after it. One runs at a time; a call
 * made while one runs makes it read once more.
 */
export function catchUp (repo: ChatRepository, hub: ChatHub, page: number, log: FastifyBaseLogger): () => Promise<void> {
  const pass = async (): Promise<void> => {
    let clients = [...hub.all].filter((client) => client.held === null)
    for (let read = 0; clients.length > 0; read++) {
      if (read === MAX_PAGES) {
        for (const client of clients) client.socket.send(JSON.stringify({ type: 'resume_more', after_seq: client.lastSeq }))
        return
      }
      const from = Math.min(...clients.map((client) => client.lastSeq))
      const events = await repo.eventsAfter(from, page)
      if (events === null) {
        // Older than the kept log: those sockets are told to reload; the others go on.
        const gone = JSON.stringify({ type: 'error', message: 'events were missed that are older than the kept history; reload with GET /api/v1/messages' })
        for (const client of clients) if (client.lastSeq === from) client.socket.send(gone)
        clients = clients.filter((client) => client.lastSeq !== from)
        continue
      }
      for (const client of clients) hub.deliver(client, events)
      if (events.length < page) return
      clients = clients.filter((client) => hub.has(client))
    }
  }
  let running: Promise<void> | null = null
  let again = false
  const loop = async (): Promise<void> => {
    try {
      do {
        again = false
        await pass()
      } while (again)
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'chat catch-up failed: sockets that missed events get them by resume')
    } finally {
      running = null
      hub.release()
    }
  }
  return async () => {
    if (running === null) {
      hub.hold()
      running = loop()
    } else {
      again = true
    }
    await running
  }
}
