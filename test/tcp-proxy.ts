import { once } from 'node:events'
import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

export type ProxyState = 'up' | 'hung' | 'down'

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL), to make that server go away
 * without touching it: `down` closes every connection and refuses new ones (a stopped server),
 * `hung` accepts and forwards nothing either way (a server stopped with SIGSTOP), `up` forwards again
 * (what a hung server had been sent is delivered then, as after SIGCONT).
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly pairs = new Set<{ client: Socket, upstream: Socket, held: Array<[Socket, Buffer]> }>()
  state: ProxyState = 'up'
  port = 0

  constructor (private readonly target: { host: string, port: number }) {}

  async start (): Promise<this> {
    await this.listen()
    return this
  }

  private async listen (): Promise<void> {
    const server = createServer((client) => this.accept(client))
    server.listen(this.port, '127.0.0.1')
    await once(server, 'listening')
    this.port = (server.address() as AddressInfo).port
    this.server = server
  }

  private accept (client: Socket): void {
    const upstream = connect(this.target.port, this.target.host)
    const pair = { client, upstream, held: [] as Array<[Socket, Buffer]> }
    this.pairs.add(pair)
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.state === 'hung') pair.held.push([to, chunk])
      else to.write(chunk)
    }
    client.on('data', forward(upstream))
    upstream.on('data', forward(client))
    const close = () => {
      this.pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    for (const socket of [client, upstream]) {
      socket.on('error', close)
      socket.on('close', close)
    }
  }

  async set (state: ProxyState): Promise<void> {
    const before = this.state
    this.state = state
    if (state === 'down' && before !== 'down') {
      for (const { client, upstream } of this.pairs) {
        client.destroy()
        upstream.destroy()
      }
      this.pairs.clear()
      const server = this.server!
      this.server = undefined
      server.close()
    }
    if (state !== 'down' && before === 'down') await this.listen()
    if (state === 'up') {
      for (const pair of this.pairs) {
        for (const [to, chunk] of pair.held) to.write(chunk)
        pair.held = []
      }
    }
  }

  url (base: string): string {
    const url = new URL(base)
    url.hostname = '127.0.0.1'
    url.port = String(this.port)
    return url.href
  }

  async close (): Promise<void> {
    await this.set('down')
  }
}
