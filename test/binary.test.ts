import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOnce } from './build.js'
import { ranOnce } from './once.js'

const root = fileURLToPath(new URL('..', import.meta.url))

t.test('the single executable runs alone: demo board, clean stop on SIGTERM', { timeout: 180_000, skip: ranOnce }, async (t) => {
  await buildOnce('binary')
  const dir = t.testdir({})
  const binary = join(dir, 'planning-api-server')
  copyFileSync(join(root, 'dist-sea', 'planning-api-server'), binary)
  t.same(readdirSync(dir), ['planning-api-server'], 'alone in an empty folder')
  t.ok(statSync(binary).mode & 0o100, 'executable')

  const started = Date.now()
  const child = spawn(binary, [], { cwd: dir, env: { PATH: '/usr/bin:/bin', PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => { out += String(d) })
  child.stderr.on('data', (d) => { err += String(d) })
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line: ${out} ${err}`)), 30_000)
    child.stdout.on('data', () => {
      // The demo's curl line (with its token) follows the listen line.
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m !== null && /X-Authentication-Token: ([^']+)'/.test(out)) { clearTimeout(timer); resolve(m[1]) }
    })
  })
  t.comment(`started in ${Date.now() - started} ms`)
  const token = /X-Authentication-Token: ([^']+)'/.exec(out)?.[1] ?? ''
  const board = await fetch(`${address}/p1/repositories/103707262/board`, { headers: { 'X-Authentication-Token': token } })
  t.equal(board.status, 200)
  const json = await board.json() as { pipelines: Array<{ issues: unknown[] }> }
  t.ok(json.pipelines.flatMap((p) => p.issues).length > 10, 'the embedded demo data')
  t.ok(readdirSync(join(dir, 'data')).includes('planning.db'), 'the embedded SQLite default')
  const docs = await fetch(`${address}/documentation`)
  t.equal(docs.status, 200, 'Swagger UI')
  const css = /href="([^"]+swagger-ui\.css)"/.exec(await docs.text())?.[1]
  t.equal((await fetch(new URL(css!, `${address}/documentation`))).status, 200, 'its static files are embedded')
  const page = await fetch(`${address}/board`)
  t.match(await page.text(), /<script type="module" src="board-assets\/board.js">/, 'the board page')
  const script = await fetch(`${address}/board-assets/board.js`)
  t.equal(script.status, 200, 'its script is embedded')
  t.match(await script.text(), /x-authentication-token/, 'the bundled page script')
  t.equal((await fetch(`${address}/favicon.ico`)).headers.get('content-type'), 'image/svg+xml', 'and its icon')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'clean exit')
  const runtimes = JSON.parse(readFileSync(join(root, 'scripts', 'runtimes.json'), 'utf8')) as Record<string, string>
  const expected = process.env.SEA_NODE === undefined ? `v${runtimes['24']}` : execFileSync(process.env.SEA_NODE, ['--version']).toString().trim()
  t.match(out, `running on Node ${expected}`, `the binary runs on ${expected}`)
  t.equal(err, '', 'nothing on stderr')
  t.match(out, 'SQLite checkpoints stay automatic', 'no worker thread can load the embedded addon: said so once')
})
