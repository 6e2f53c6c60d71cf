// tsc compiles TypeScript only; the demo fixture travels beside the compiled code.
import { cpSync } from 'node:fs'

cpSync('fixtures', 'dist/fixtures', { recursive: true })
