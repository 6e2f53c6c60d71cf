import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'

/** Why a Redis of the test's own cannot be started (no `redis-server` on the PATH), or false. */
export const noRedisServer: string | false = spawnSync('redis-server', ['--version']).error === undefined
  ? false
  : 'redis-server is not installed: the Redis outage tests are skipped'

/** A port of 127.0.0.1 free a moment ago. */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

async function answers (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/**
 * A Redis of the test's own on a free port of 127.0.0.1 (nothing saved), stopped and started again
 * on the same port by the test; never the shared one. Stopped after the test.
 */
export class OwnRedis {
  private process: ChildProcess | undefined
  port = 0

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start (t: Test): Promise<OwnRedis> {
    const redis = new OwnRedis()
    redis.port = await freePort()
    await redis.restart()
    t.teardown(async () => await redis.stop())
    return redis
  }

  /** Starts it (again) on its port; resolves once it takes connections. */
  async restart (): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' })
    this.process = child
    const deadline = Date.now() + 5000
    while (!await answers(this.port)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${this.port}`)
      await sleep(20)
    }
  }

  /** Stops it (SIGKILL: gone at once, as a crashed server); resolves once it has exited. */
  async stop (): Promise<void> {
    const child = this.process
    this.process = undefined
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
}
