import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

// The baseline: node:http answering the bytes of BENCH_BODY_FILE with the same content type.
const body = readFileSync(process.env.BENCH_BODY_FILE!)
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length })
  res.end(body)
})
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
