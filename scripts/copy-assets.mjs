// tsc compiles TypeScript only; the demo fixture, the GraphQL schema and the board page travel beside the compiled code,
// the page's script bundled by esbuild.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOARD_FILES, bundleBoard } from '../board/bundle.mjs'

cpSync('fixtures', 'dist/fixtures', { recursive: true })
cpSync('plugins/graphql/schema', 'dist/plugins/graphql/schema', { recursive: true })
mkdirSync('dist/board', { recursive: true })
for (const name of BOARD_FILES) cpSync(join('board', name), join('dist/board', name))
writeFileSync('dist/board/board.js', await bundleBoard())
