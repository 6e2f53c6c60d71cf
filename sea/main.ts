import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getAsset } from 'node:sea'
import { useNativeBinding } from '../db/engine/sqlite.js'
import { start } from '../server.js'
import { BOARD_PAGE_FILES } from '../plugins/board-page.js'

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

// Swagger UI's static files are served from a private folder of their own while the server runs.
const ui = mkdtempSync(join(tmpdir(), 'planning-api-docs-'))
for (const name of JSON.parse(getAsset('swagger-ui-files.json', 'utf8')) as string[]) {
  writeFileSync(join(ui, name), Buffer.from(getAsset(`swagger-ui/${name}`)), { mode: 0o400 })
}
// The board page's files likewise.
const board = mkdtempSync(join(tmpdir(), 'planning-api-board-'))
for (const name of BOARD_PAGE_FILES) writeFileSync(join(board, name), Buffer.from(getAsset(`board/${name}`)), { mode: 0o400 })
process.on('exit', () => {
  rmSync(ui, { recursive: true, force: true })
  rmSync(board, { recursive: true, force: true })
})

// pino-pretty runs in a worker thread that loads it from node_modules: not in here, so JSON logs.
start({ demoFixture: JSON.parse(getAsset('demo.json', 'utf8')), documentationFiles: ui, boardPageFiles: board, prettyLogs: false }).catch((err) => {
  console.error(err)
  process.exit(1)
})
