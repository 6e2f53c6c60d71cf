import t from 'tap'
import { readFileSync } from 'node:fs'
import ts from 'typescript'

// docs/plugin.md's options table against the option interfaces of app.ts, read from the source.
function optionNames (name: string): string[] {
  const source = ts.createSourceFile('app.ts', readFileSync(new URL('../app.ts', import.meta.url), 'utf8'), ts.ScriptTarget.ES2022)
  const found = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name)
  if (found === undefined) throw new Error(`app.ts has no interface ${name}`)
  return found.members.map((m) => (m.name as ts.Identifier).text)
}

t.test('the options table of docs/plugin.md lists every option of planningApi and planningCore, and no other', async (t) => {
  const doc = readFileSync(new URL('../docs/plugin.md', import.meta.url), 'utf8')
  const rows = [...doc.matchAll(/^\| `(\w+)` \| (core)? ?\|/gm)].map((m) => ({ name: m[1], core: m[2] === 'core' }))
  const core = optionNames('PlanningCoreOptions')
  const api = optionNames('PlanningApiOptions')
  t.same(rows.map((r) => r.name).sort(), [...core, ...api].sort(), 'the same options')
  t.same(rows.filter((r) => r.core).map((r) => r.name).sort(), [...core].sort(), 'the core ones marked core')
})

t.test('docs/plugin.md names only exports that exist', async (t) => {
  const doc = readFileSync(new URL('../docs/plugin.md', import.meta.url), 'utf8')
  const exports = await import('../app.js') as Record<string, unknown>
  const section = doc.slice(doc.indexOf('## Exports'), doc.indexOf('## Options'))
  const values = [...section.matchAll(/`(\w+)`/g)].map((m) => m[1]).filter((name) => !/^[A-Z]/.test(name))
  t.ok(values.length > 20)
  for (const name of values) t.ok(name in exports, `${name} is exported`)
  const imported = /import \{([^}]+)\} from 'planning-api-server'/.exec(doc)![1].split(',').map((s) => s.trim().replace(/^type /, ''))
  for (const name of imported.filter((n) => !/^[A-Z]/.test(n))) t.ok(name in exports, `the example's ${name} is exported`)
})
