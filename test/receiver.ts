import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** An HTTP receiver on 127.0.0.1 that keeps the form fields of every webhook body it gets. */
export async function formReceiver (t: Test): Promise<{ url: string, received: Array<Record<string, string>> }> {
  const received: Array<Record<string, string>> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => { received.push(Object.fromEntries(new URLSearchParams(body))); res.end('ok') })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received }
}
