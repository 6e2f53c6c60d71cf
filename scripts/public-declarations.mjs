// The sources augment Fastify's own interfaces (`declare module 'fastify'`) so that the plugins
// type-check against the decorators they share. Shipped as they are, those augmentations would claim
// `planningStore` and the rest on every Fastify instance of a host app, where they do not exist, and
// clash with other packages' route config (`rateLimit`). The published declarations drop them; a
// host types the plugin's own scope with the exported `PlanningInstance` (docs/plugin.md, "Types").
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The text without its `declare module 'fastify' { … }` blocks (tsc writes them from column 0 to a `}` line). */
export function withoutAugmentations (text) {
  return text.replace(/^declare module 'fastify' \{\n[\s\S]*?^\}\n/gm, '')
}

function * declarations (dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield * declarations(path)
    else if (entry.name.endsWith('.d.ts')) yield path
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const path of declarations('dist')) {
    const text = readFileSync(path, 'utf8')
    const kept = withoutAugmentations(text)
    if (kept !== text) writeFileSync(path, kept)
  }
}
