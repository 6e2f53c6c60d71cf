import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const LOCK = join(root, '.cache', 'build.lock')
// In .cache, not dist/ (npm pack would carry it): the newest source time the last build saw.
const STAMP = join(root, '.cache', 'build.stamp')
const NOT_SOURCES = new Set(['node_modules', 'dist', 'dist-sea', '.git', '.cache', '.tap', 'coverage', 'data'])

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

const builtAt = (): number => existsSync(join(root, 'dist', 'server.js')) ? statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? -1 : -1

/**
 * `npm run build`, once for the sources as they are: test files running at once (tap's jobs) take
 * turns through a lock, and a build newer than every source is kept, so none rewrites `dist/`
 * while another runs or packs it.
 */
export async function buildOnce (): Promise<void> {
  mkdirSync(join(root, '.cache'), { recursive: true })
  for (const deadline = Date.now() + 300_000; ;) {
    try {
      mkdirSync(LOCK)
      break
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err
      // A lock left by a process that died mid-build.
      const held = statSync(LOCK, { throwIfNoEntry: false })
      if (held !== undefined && Date.now() - held.mtimeMs > 300_000) rmSync(LOCK, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error(`another test has held ${LOCK} for 5 minutes`)
      await sleep(100)
    }
  }
  try {
    const sources = newestSource()
    if (builtAt() >= sources) return
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    writeFileSync(STAMP, '')
    utimesSync(STAMP, new Date(sources), new Date(sources))
  } finally {
    rmSync(LOCK, { recursive: true, force: true })
  }
}
