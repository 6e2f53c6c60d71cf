// tsc compiles TypeScript only; the demo fixture and the board page travel beside the compiled code.
import { cpSync } from 'node:fs'

cpSync('fixtures', 'dist/fixtures', { recursive: true })
cpSync('board', 'dist/board', { recursive: true })
