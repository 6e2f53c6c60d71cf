import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { build, REPO, TOKENS, P, TS_LOADER } from './helper.js'

const root = fileURLToPath(new URL('..', import.meta.url))

t.test('BASE_PATH mounts every route under a prefix', async (t) => {
  const app = await build(t, { basePath: '/api' })
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200)
  const outside = await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': TOKENS.alice } })
  t.equal(outside.statusCode, 404)
  t.equal(outside.json().statusCode, 404)
})

t.test('the OpenAPI document is served under the base path', async (t) => {
  const app = await build(t, { basePath: '/api', documentation: true })
  const doc = await app.inject({ url: '/api/documentation/json' })
  t.equal(doc.statusCode, 200)
  t.ok(doc.json().paths['/api/p1/repositories/{repo_id}/board'], 'routes documented with the prefix')
  t.equal((await app.inject({ url: '/api/documentation' })).statusCode < 400, true, 'Swagger UI')
})

t.test('tokens never reach the log', async (t) => {
  const lines: string[] = []
  const logStream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { logLevel: 'info', logStream })
  await app.inject({ url: `/p1/repositories/${REPO}/board?access_token=${TOKENS.alice}&x=1` })
  await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': TOKENS.bob, authorization: `Bearer ${TOKENS.carol}` } })
  const log = lines.join('')
  t.match(log, /access_token=\[REDACTED\]&x=1/)
  for (const token of Object.values(TOKENS)) t.notOk(log.includes(token), 'token absent from the log')
})

t.test('tokens are redacted by their decoded name and never echoed, inside or outside BASE_PATH', async (t) => {
  const lines: string[] = []
  const logStream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { logLevel: 'info', logStream, basePath: '/api' })
  const encoded = await app.inject({ url: `/api/p1/repositories/${REPO}/board?access%5Ftoken=${TOKENS.alice}` })
  t.equal(encoded.statusCode, 200, 'an encoded parameter name is still a token')
  const answers = [
    await app.inject({ url: `/elsewhere?access_token=${TOKENS.bob}` }),
    await app.inject({ url: `/api/nothing?ACCESS_TOKEN=${TOKENS.bob}` }),
    await app.inject({ url: `/api/p1/repositories/%E0%A4%A/board?access_token=${TOKENS.carol}` }),
    await app.inject({ url: `/%zz?access_token=${TOKENS.carol}` })
  ]
  for (const res of answers) {
    t.ok(res.statusCode === 404 || res.statusCode === 400, `${res.statusCode}`)
    t.same(Object.keys(res.json()).sort(), ['error', 'message', 'statusCode'], 'the one error shape')
    t.notOk(res.body.includes('token'), `not echoed: ${res.body}`)
  }
  const log = lines.join('')
  t.match(log, /access%5Ftoken=\[REDACTED\]/)
  for (const token of Object.values(TOKENS)) t.notOk(log.includes(token), 'token absent from the log')
})

t.test('data survives a restart on the same file', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const first = await build(t, { database })
  t.equal((await first.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 8 } })).statusCode, 200)
  t.equal((await first.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/2/moves`, payload: { pipeline_id: P.done, position: 0 } })).statusCode, 200)
  await first.close()
  const second = await build(t, { database, fixture: null })
  const data = (await second.as('alice', { url: `/p1/repositories/${REPO}/issues/2` })).json()
  t.same(data.estimate, { value: 8 })
  t.equal(data.pipeline.pipeline_id, P.done)
})

t.test('the server starts from the environment and closes gracefully on SIGTERM', async (t) => {
  const dir = t.testdir({})
  const child = spawn(process.execPath, [
    '--import', TS_LOADER, join(root, 'server.ts')
  ], {
    env: { ...process.env, PORT: '0', DATABASE_PATH: join(dir, 'db', 'planning.db'), LOG_LEVEL: 'info', DEMO: 'true' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout.on('data', (d) => { out += String(d) })
  const listening = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 30_000)
    child.stdout.on('data', () => {
      // The curl line follows the listen line: it names the address listened on.
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m !== null && out.includes('try it: curl')) { clearTimeout(timer); resolve(m[1]) }
    })
  })
  const token = /X-Authentication-Token: ([^']+)'/.exec(out)?.[1]
  t.ok(token, 'demo token logged')
  t.match(out, `' ${listening}/p1/repositories/103707262/board"`, 'the curl line names the port listened on')
  const res = await fetch(`${listening}/p1/repositories/103707262/board`, { headers: { 'X-Authentication-Token': token ?? '' } })
  t.equal(res.status, 200)
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'clean exit')
  t.match(out, /"signal":"SIGTERM"/)
})

t.test('a bad variable stops the server with a message naming it', async (t) => {
  const child = spawn(process.execPath, [
    '--import', TS_LOADER, join(root, 'server.ts')
  ], { env: { ...process.env, PORT: 'abc' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => { err += String(d) })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(err, /invalid configuration: PORT must be integer/)
})

t.test('the OpenAPI document: every operation has a summary; admin routes take the admin token, probes none', async (t) => {
  const app = await build(t, { documentation: true })
  const doc = (await app.inject({ url: '/documentation/json' })).json() as {
    paths: Record<string, Record<string, { summary?: string, security?: unknown[], tags?: string[] }>>
    components: { securitySchemes: Record<string, { description?: string }> }
  }
  const missing = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([, op]) => op.summary === undefined).map(([method]) => `${method} ${path}`))
  t.same(missing, [], 'every operation has a summary')
  t.same(doc.paths['/admin/users'].get.security, [{ admin: [] }], 'the admin API declares its Bearer scheme')
  t.same(doc.paths['/health'].get.security, [], 'probes need no token')
  for (const [name, scheme] of Object.entries(doc.components.securitySchemes)) t.ok(scheme.description, `${name} says where the token comes from`)
})

t.test('Swagger UI loads its files under BASE_PATH and under a host app\'s prefix', async (t) => {
  for (const [options, base] of [[{ basePath: '/api' }, '/api'], [{}, '']] as const) {
    const app = await build(t, { ...options, documentation: true })
    for (const page of [`${base}/documentation`, `${base}/documentation/`]) {
      const html = (await app.inject({ url: page })).body
      const links = [...html.matchAll(/(?:href|src)="([^"]+\.(?:css|js))"/g)].map((m) => new URL(m[1], `http://x${page}`).pathname)
      t.ok(links.length >= 4, `${page} links its files`)
      for (const link of links) t.equal((await app.inject({ url: link })).statusCode, 200, `${page} → ${link}`)
    }
  }
  const { default: Fastify } = await import('fastify')
  const { planningApi } = await import('../app.js')
  const host = Fastify()
  await host.register(planningApi, { prefix: '/planning' })
  t.teardown(() => host.close())
  const html = (await host.inject({ url: '/planning/documentation' })).body
  const css = /href="([^"]+swagger-ui\.css)"/.exec(html)![1]
  t.equal(css, '/planning/documentation/static/swagger-ui.css')
  t.equal((await host.inject({ url: css })).statusCode, 200)
})
