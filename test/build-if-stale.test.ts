import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const script = fileURLToPath(new URL('../scripts/build-if-stale.mjs', import.meta.url))

t.test('npm start says what it is doing before a build, and nothing when the build is current', async (t) => {
  // A checkout whose build only makes dist/: what the script prints is the point, not the compile.
  const dir = t.testdir({ 'package.json': JSON.stringify({ name: 'x', private: true, scripts: { build: 'node -e "require(\'fs\').mkdirSync(\'dist\', { recursive: true })"' } }) })
  const run = () => spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', timeout: 60_000 })
  const first = run()
  t.equal(first.status, 0, first.stderr)
  t.match(first.stderr, /^Building dist\/ from the TypeScript sources/m, 'a line before the build')
  const second = run()
  t.equal(second.status, 0)
  t.equal(second.stderr, '', 'nothing built, nothing said')
})
