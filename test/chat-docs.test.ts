import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build, TOKENS } from './helper.js'

const page = readFileSync(fileURLToPath(new URL('../docs/chat.md', import.meta.url)), 'utf8')

/** The shell blocks of a `## heading` of docs/chat.md, in order. */
function blocks (heading: string): string[] {
  const start = page.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`docs/chat.md has no section "${heading}"`)
  const next = page.indexOf('\n## ', start + 4)
  return [...page.slice(start, next < 0 ? page.length : next).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
}

t.test('the curl examples of docs/chat.md run as written, as the broadcaster', async (t) => {
  const app = await build(t)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  // curl fails on an HTTP error, the shell on any failed command; the server runs in this process,
  // so the shell runs beside it (never a synchronous child, which would block the server).
  const run = async (heading: string): Promise<string> => {
    let out = ''
    for (const block of blocks(heading)) {
      const script = `set -euo pipefail\n${block.replaceAll(/^curl /gm, 'curl -sSf --max-time 10 ')}`
      out += (await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, TOKEN: TOKENS.alice, BASE: base }, encoding: 'utf8' })).stdout
    }
    return out
  }
  const say = async (login: 'carol' | 'dave', message: string) => await app.as(login, { method: 'POST', url: '/api/v1/messages/send', payload: { message } })

  await run('Variables')
  t.match((await app.as('carol', { url: '/api/v1/messages' })).json().data.at(-1), { user: { login: 'bot' }, text: /^alice hugs carol! \(\d+\/10\)$/ })
  t.match(await run('Counters'), /"name":"deaths","value":0/)
  await run('Cooldowns')
  t.equal((await say('carol', '!lurk')).json().command_cooldown_seconds, undefined)
  t.ok((await say('carol', '!lurk')).json().command_cooldown_seconds > 590, 'as the comment says')
  await run('Timers')
  t.match((await app.as('alice', { url: '/api/v1/timers/1' })).json(), { name: 'discord', enabled: false })
  await run('Filters')
  t.equal((await say('carol', 'free  vbucks')).statusCode, 422)
  t.equal((await say('dave', 'see my.site')).statusCode, 202)
  t.equal((await say('dave', 'and other.site')).statusCode, 202)
  t.equal((await say('carol', 'see my.site')).statusCode, 201, 'carol holds the permit')
  t.match(await run('Moderation queue'), /"status":"pending"/)
  t.same((await app.as('alice', { url: '/api/v1/held?status=all' })).json().data.map((h: { status: string }) => h.status), ['denied', 'approved'])
  await run('Slow mode and new users')
  t.match((await app.as('carol', { url: '/api/v1/settings' })).json(), { slow_seconds: 10 })
  t.match(JSON.parse(await run('Importing commands')), { imported: 1, skipped: [], warnings: [] })
})
