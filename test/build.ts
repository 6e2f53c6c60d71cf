import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const NOT_SOURCES = new Set(['node_modules', 'dist', 'dist-sea', '.git', '.cache', '.tap', 'coverage', 'data'])

/** What a build makes, the npm script that makes it, and (in .cache, which npm pack leaves out) its lock and the newest source time it saw. */
const TARGETS = {
  dist: { script: 'build', output: join('dist', 'server.js'), stamp: 'build.stamp', lock: 'build.lock' },
  binary: { script: 'build:binary', output: join('dist-sea', 'planning-api-server'), stamp: 'binary.stamp', lock: 'binary.lock' }
}
type Target = keyof typeof TARGETS

/** The newest modification time of what the build reads (everything but outputs and caches). */
function newestSource (dir = root): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (NOT_SOURCES.has(entry.name)) continue
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}

function builtAt (target: Target): number {
  const { output, stamp } = TARGETS[target]
  return existsSync(join(root, output)) ? statSync(join(root, '.cache', stamp), { throwIfNoEntry: false })?.mtimeMs ?? -1 : -1
}

/**
 * `npm run build` (or `build:binary`), once for the sources as they are: test files running at once
 * (tap's jobs) take turns through a lock, and a build newer than every source is kept, so none
 * rewrites `dist/` while another runs or packs it, and CI builds each once per run (.ci/run builds
 * both before the tests, `node --import=tsx test/build.ts dist binary`). A binary for another
 * runtime (SEA_NODE) is always built afresh.
 */
export async function buildOnce (target: Target = 'dist'): Promise<void> {
  mkdirSync(join(root, '.cache'), { recursive: true })
  const lock = join(root, '.cache', TARGETS[target].lock)
  for (const deadline = Date.now() + 300_000; ;) {
    try {
      mkdirSync(lock)
      break
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err
      // A lock left by a process that died mid-build.
      const held = statSync(lock, { throwIfNoEntry: false })
      if (held !== undefined && Date.now() - held.mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error(`another test has held ${lock} for 5 minutes`)
      await sleep(100)
    }
  }
  try {
    const sources = newestSource()
    const stamp = join(root, '.cache', TARGETS[target].stamp)
    if (target === 'binary' && process.env.SEA_NODE !== undefined) rmSync(stamp, { force: true })
    else if (builtAt(target) >= sources) return
    execFileSync('npm', ['run', TARGETS[target].script, '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    if (target === 'binary' && process.env.SEA_NODE !== undefined) return
    writeFileSync(stamp, '')
    utimesSync(stamp, new Date(sources), new Date(sources))
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const target of process.argv.slice(2)) await buildOnce(target as Target)
}
