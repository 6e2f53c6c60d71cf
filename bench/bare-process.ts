import { readFileSync } from 'node:fs'
import { createServer, type OutgoingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

// The baseline: node:http answering the bytes of BENCH_BODY_FILE with the same content type, or
// with the headers of BENCH_HEADERS_FILE (a JSON list of [name, value] pairs, in their order).
const body = readFileSync(process.env.BENCH_BODY_FILE!)
const listed = process.env.BENCH_HEADERS_FILE === undefined ? undefined : JSON.parse(readFileSync(process.env.BENCH_HEADERS_FILE, 'utf8')) as Array<[string, string]>
const headers: OutgoingHttpHeaders = listed === undefined
  ? { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }
  : Object.fromEntries(listed)
const server = createServer((_req, res) => {
  res.writeHead(200, headers)
  res.end(body)
})
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
