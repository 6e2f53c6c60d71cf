// Builds one executable file (Node's single executable application support): the server bundled
// by esbuild into one CommonJS file, injected with postject into a copy of a Node binary, with the
// better-sqlite3 addon built for that Node and the demo fixture as embedded assets. The Node is the
// newest supported LTS (scripts/runtimes.json, fetched from the registry) unless SEA_NODE names one.
import { addonFor, fetchRuntime } from './node-runtime.mjs'
import { BOARD_FILES, bundleBoard } from '../board/bundle.mjs'
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { inject } from 'postject'

const out = 'dist-sea'
const binary = join(out, process.platform === 'win32' ? 'planning-api-server.exe' : 'planning-api-server')
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

await build({
  entryPoints: ['sea/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: join(out, 'main.cjs'),
  // Optional native speed-ups of ws: not in the binary, and told not to look for them.
  external: ['bufferutil', 'utf-8-validate'],
  define: {
    'import.meta.url': 'undefined',
    'process.env.WS_NO_BUFFER_UTIL': '"1"',
    'process.env.WS_NO_UTF_8_VALIDATE': '"1"'
  },
  logLevel: 'warning'
})

const runtimes = JSON.parse(readFileSync(new URL('./runtimes.json', import.meta.url), 'utf8'))
const seaNode = process.env.SEA_NODE ?? join(fetchRuntime(runtimes['24']), 'bin', 'node')
const seaVersion = execFileSync(seaNode, ['--version']).toString().trim().replace(/^v/, '')
const require = createRequire(import.meta.url)
const installed = join(dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node')
const addon = seaVersion === process.versions.node ? installed : addonFor(seaVersion)
// Swagger UI's static files travel inside too, so /documentation works from the binary.
const swaggerUiDir = join(dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static')
const swaggerUiFiles = readdirSync(swaggerUiDir)
const swaggerUiAssets = Object.fromEntries(swaggerUiFiles.map((name) => [`swagger-ui/${name}`, join(swaggerUiDir, name)]))
writeFileSync(join(out, 'swagger-ui-files.json'), JSON.stringify(swaggerUiFiles))
swaggerUiAssets['swagger-ui-files.json'] = join(out, 'swagger-ui-files.json')
// The board page: its files, and its script bundled.
writeFileSync(join(out, 'board.js'), await bundleBoard())
const boardAssets = Object.fromEntries(BOARD_FILES.map((name) => [`board/${name}`, join('board', name)]))
boardAssets['board/board.js'] = join(out, 'board.js')
writeFileSync(join(out, 'sea-config.json'), JSON.stringify({
  main: join(out, 'main.cjs'),
  output: join(out, 'sea-prep.blob'),
  disableExperimentalSEAWarning: true,
  assets: {
    'better_sqlite3.node': addon,
    'demo.json': 'fixtures/demo.json',
    'schema.graphql': 'plugins/graphql/schema/schema.graphql',
    ...swaggerUiAssets,
    ...boardAssets
  }
}))
execFileSync(seaNode, ['--experimental-sea-config', join(out, 'sea-config.json')], { stdio: 'inherit' })

copyFileSync(seaNode, binary)
chmodSync(binary, 0o755)
await inject(binary, 'NODE_SEA_BLOB', readFileSync(join(out, 'sea-prep.blob')), {
  sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  machoSegmentName: process.platform === 'darwin' ? 'NODE_SEA' : undefined
})
console.log(`built ${binary} on Node ${seaVersion} (${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB)`)
