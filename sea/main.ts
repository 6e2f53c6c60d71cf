import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getAsset } from 'node:sea'
import { useNativeBinding } from '../db/sqlite.js'
import { start } from '../server.js'

// Entry point of the single executable (`npm run build:binary`). The better-sqlite3 addon travels
// inside it as an asset: write it to a private temporary folder, load it, and remove the file
// (the loaded library stays mapped). The demo fixture is an asset too.
const dir = mkdtempSync(join(tmpdir(), 'planning-api-'))
try {
  const addon = join(dir, 'better_sqlite3.node')
  writeFileSync(addon, Buffer.from(getAsset('better_sqlite3.node')), { mode: 0o500 })
  const loaded = { exports: {} }
  process.dlopen(loaded, addon)
  useNativeBinding(loaded.exports)
} finally {
  rmSync(dir, { recursive: true, force: true })
}

// pino-pretty runs in a worker thread that loads it from node_modules: not in here, so JSON logs.
start({ demoFixture: JSON.parse(getAsset('demo.json', 'utf8')), documentation: 'json', prettyLogs: false }).catch((err) => {
  console.error(err)
  process.exit(1)
})
