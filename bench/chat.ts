import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { buildApp } from '../app.js'
import { openSqliteFile } from '../db/engine/sqlite.js'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { percentile } from './stats.js'

const TOKEN = 'chat-bench-token-0123456789'

/** Time from POST /messages/send to receipt on each of 1,000 connected WebSocket clients. */
export async function benchChat (sockets = 1000, messages = 50): Promise<string[]> {
  const db = openSqliteFile(':memory:')
  const store = await openSqliteStore(db)
  await loadFixture(store, { users: [{ login: 'bench', token: TOKEN }] })
  await store.close()
  const app = await buildApp({
    database: db,
    documentation: false,
    rateLimit: false,
    chat: { sendLimit: { max: 1e9, windowMs: 1000 } },
    limits: { maxConnections: sockets + 100 }
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const latencies: number[] = []
  const sentAt = new Map<number, number>()
  const clients: WebSocket[] = []
  try {
    for (let i = 0; i < sockets; i++) {
      const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKEN}`)
      socket.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { type: string, data?: { text?: string } }
        if (frame.type !== 'message.created') return
        const start = sentAt.get(Number(frame.data?.text))
        if (start !== undefined) latencies.push(performance.now() - start)
      })
      clients.push(socket)
    }
    await Promise.all(clients.map(async (s) => await once(s, 'open')))
    for (let i = 0; i < messages; i++) {
      const expected = (i + 1) * sockets
      sentAt.set(i, performance.now())
      const res = await fetch(`${address}/api/v1/messages/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-authentication-token': TOKEN },
        body: JSON.stringify({ message: String(i) })
      })
      if (res.status !== 201) throw new Error(`send answered ${res.status}`)
      const deadline = Date.now() + 10_000
      while (latencies.length < expected && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve))
    }
  } finally {
    for (const s of clients) s.terminate()
    await app.close()
    db.close()
  }
  const sorted = [...latencies].sort((a, b) => a - b)
  return [
    `chat fan-out to ${sockets.toLocaleString('en')} WebSocket clients, ${messages} messages: ${latencies.length.toLocaleString('en')} receipts, ` +
    `send-to-receipt p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms`
  ]
}
