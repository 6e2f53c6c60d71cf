// `npm start` and `npm run admin` build first, but only when a source changed since the last
// build (tsc is incremental as well): a restart with nothing changed starts at once.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

// Written after each build this script runs (tsc leaves its own build info alone when nothing changed).
const built = 'dist/.built'
const sources = ['app.ts', 'server.ts', 'config.ts', 'tsconfig.json', 'package.json', 'plugins', 'schemas', 'db', 'services', 'delivery', 'sea', 'cli', 'bench', 'fixtures', 'board']

function newest (path) {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

if (!existsSync(built) || Math.max(...sources.map(newest)) > statSync(built).mtimeMs) {
  // The first build takes a minute or two on a small machine: say so rather than sit silent.
  process.stderr.write(`Building dist/ from the TypeScript sources (${existsSync(built) ? 'a source changed' : 'first run'}; a minute or two on a small machine)…\n`)
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' })
  writeFileSync(built, `${new Date().toISOString()}\n`)
}
