// The GraphQL schema we offer against the hosted service's (shared/spec's reference SDL):
// `conflicts` lists every way ours differs where both have a thing (the test fails on any);
// run as a script, it writes the coverage table of docs/graphql.md between its markers.
// Usage: node scripts/graphql-coverage.mjs <reference.graphql>
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType } from 'graphql'

const kind = (t) => isObjectType(t) ? 'object' : isInterfaceType(t) ? 'interface' : isInputObjectType(t) ? 'input' : isEnumType(t) ? 'enum' : isUnionType(t) ? 'union' : 'scalar'

/** Every conflict between `ours` and `ref` (GraphQLSchema objects), as sentences. */
export function conflicts (ours, ref) {
  const out = []
  for (const t of Object.values(ours.getTypeMap())) {
    if (t.name.startsWith('__')) continue
    const r = ref.getType(t.name)
    if (r === undefined || r === null) continue
    if (kind(t) !== kind(r)) { out.push(`${t.name} is a ${kind(t)}, the reference's a ${kind(r)}`); continue }
    if (isEnumType(t)) {
      for (const v of t.getValues()) if (r.getValue(v.name) == null) out.push(`${t.name}.${v.name} is not a value of the reference`)
      continue
    }
    if (isObjectType(t) || isInterfaceType(t)) {
      const theirs = new Set(r.getInterfaces().map((i) => i.name))
      for (const i of t.getInterfaces()) if (!theirs.has(i.name)) out.push(`${t.name} implements ${i.name}, the reference's does not`)
    }
    if (!('getFields' in t)) continue
    const rf = r.getFields()
    for (const f of Object.values(t.getFields())) {
      const g = rf[f.name]
      if (g === undefined) { out.push(`${t.name}.${f.name} is not in the reference`); continue }
      if (String(f.type) !== String(g.type)) out.push(`${t.name}.${f.name} is ${f.type}, the reference's ${g.type}`)
      if (!isInputObjectType(t)) {
        for (const a of f.args) {
          const b = g.args.find((x) => x.name === a.name)
          if (b === undefined) out.push(`${t.name}.${f.name}(${a.name}) is not in the reference`)
          else if (String(a.type) !== String(b.type)) out.push(`${t.name}.${f.name}(${a.name}) is ${a.type}, the reference's ${b.type}`)
        }
        for (const b of g.args) if (String(b.type).endsWith('!') && b.defaultValue === undefined && !f.args.some((a) => a.name === b.name)) out.push(`${t.name}.${f.name} lacks the reference's required argument ${b.name}`)
      }
    }
    if (isInputObjectType(t)) {
      for (const g of Object.values(rf)) if (String(g.type).endsWith('!') && g.defaultValue === undefined && t.getFields()[g.name] === undefined) out.push(`${t.name} lacks the reference's required field ${g.name}`)
    }
  }
  return out
}

/** The coverage table: per root field of the reference, whether we offer it. */
export function coverageTable (ours, ref) {
  const rows = ['| Operation | Kind | Offered |', '|---|---|---|']
  let offered = 0
  let total = 0
  for (const [root, label] of [[ref.getQueryType(), 'query'], [ref.getMutationType(), 'mutation']]) {
    if (root == null) continue
    const mine = label === 'query' ? ours.getQueryType() : ours.getMutationType()
    for (const f of Object.values(root.getFields()).sort((a, b) => a.name.localeCompare(b.name))) {
      const has = mine?.getFields()[f.name] !== undefined
      total++
      if (has) offered++
      rows.push(`| \`${f.name}\` | ${label} | ${has ? 'yes' : 'no'} |`)
    }
  }
  return `${offered} of the reference's ${total} operations are offered.\n\n${rows.join('\n')}\n`
}

export const BEGIN = '<!-- coverage:begin (scripts/graphql-coverage.mjs writes this table) -->'
export const END = '<!-- coverage:end -->'

/** docs/graphql.md with its table brought up to date. */
export function withTable (doc, table) {
  const start = doc.indexOf(BEGIN)
  const end = doc.indexOf(END)
  if (start === -1 || end === -1) throw new Error('docs/graphql.md lacks the coverage markers')
  return `${doc.slice(0, start + BEGIN.length)}\n${table}${doc.slice(end)}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ref = buildSchema(readFileSync(process.argv[2], 'utf8'))
  const ours = buildSchema(readFileSync(new URL('../plugins/graphql/schema/schema.graphql', import.meta.url), 'utf8'))
  const doc = new URL('../docs/graphql.md', import.meta.url)
  writeFileSync(doc, withTable(readFileSync(doc, 'utf8'), coverageTable(ours, ref)))
}
