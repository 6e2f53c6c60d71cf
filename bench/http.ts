import autocannon from 'autocannon'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../app.js'
import { openSqliteFile } from '../db/sqlite.js'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'

const TOKEN = 'bench-token-0123456789'
const WORKSPACE = 'bench0000000000000000000'
const PIPELINES = ['Backlog', 'Doing', 'Review', 'Done']

async function requestsPerSecond (url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 10, duration: seconds, headers: { 'x-authentication-token': TOKEN } })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

async function bareServer (body: string): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/**
 * Requests per second for GET board and GET issue data on a 1,000-issue workspace, against a
 * bare node:http server answering the same bytes, in the same run.
 */
export async function benchHttp (seconds: number): Promise<string[]> {
  const db = openSqliteFile(':memory:')
  const store = await openSqliteStore(db)
  await loadFixture(store, {
    users: [{ login: 'bench', token: TOKEN }],
    repositories: [{ id: 1, owner: 'bench', name: 'bench', permissions: { bench: 'admin' } }],
    workspaces: [{ id: WORKSPACE, name: 'Bench', repositories: [1], pipelines: PIPELINES }],
    issues: Array.from({ length: 1000 }, (_, i) => ({
      repo_id: 1,
      number: i + 1,
      title: `Issue ${i + 1}`,
      ...(i % 3 === 0 ? { estimate: 3 } : {}),
      pipelines: { [WORKSPACE]: PIPELINES[i % 4] }
    }))
  })
  await store.close()
  const app = await buildApp({ database: db, rateLimit: { max: 1e9, timeWindow: 60_000 }, documentation: false })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const lines: string[] = []
  try {
    for (const [name, path] of [['GET board (1,000 issues)', '/p1/repositories/1/board'], ['GET issue data', '/p1/repositories/1/issues/500']]) {
      const sample = await app.inject({ url: path, headers: { 'x-authentication-token': TOKEN } })
      const bare = await bareServer(sample.body)
      const ours = await requestsPerSecond(`${address}${path}`, seconds)
      const baseline = await requestsPerSecond(`http://127.0.0.1:${(bare.address() as AddressInfo).port}${path}`, seconds)
      bare.close()
      lines.push(`${name}: ${ours.toFixed(0)} req/s; bare node:http with the same ${sample.body.length} bytes: ${baseline.toFixed(0)} req/s; ratio ${(ours / baseline).toFixed(2)}`)
    }
  } finally {
    await app.close()
    db.close()
  }
  return lines
}
