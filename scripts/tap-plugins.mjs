// Runs `tap build` when tap's built test class does not match the plugins package.json names.
// npm ci installs tap with its default plugins built in, @tapjs/typescript among them, and tap does
// not rebuild on its own: every test process then loaded ts-node beside tsx, which type-checked the
// project again in each file (about 30 s of CPU a file). docs/development.md, "CI".
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'

const modules = new URL('../node_modules/', import.meta.url)
const configured = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).tap?.plugin ?? []
let built
try {
  built = readFileSync(new URL('@tapjs/test/test-built/dist/esm/index.js', modules), 'utf8')
} catch {
  process.exit(0) // tap is not installed (npm ci --omit=dev): nothing to build
}
const imports = (name) => built.includes(`from "${name}"`)
const stale = configured.some((entry) => entry.startsWith('!') ? imports(entry.slice(1)) : !imports(entry))
if (stale) {
  console.error('# tap build: the test class is built with the plugins package.json names (once after an install)')
  execFileSync(process.execPath, [new URL('tap/dist/esm/run.mjs', modules).pathname, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
}
