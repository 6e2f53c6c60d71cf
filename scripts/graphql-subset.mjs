// Prints the GraphQL subset we offer, cut from a reference SDL: the types and fields listed in
// plugins/graphql/subset.json, with the reference's names, arguments, types, nullability and
// list-ness, and with our own descriptions from that file. Arguments whose types we do not offer
// are left out. Usage: node scripts/graphql-subset.mjs <reference.graphql> > plugins/graphql/schema/schema.graphql
import { readFileSync } from 'node:fs'
import { buildSchema, getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, isUnionType, print, astFromValue } from 'graphql'

const ref = buildSchema(readFileSync(process.argv[2], 'utf8'))
const spec = JSON.parse(readFileSync(new URL('../plugins/graphql/subset.json', import.meta.url), 'utf8'))
const BUILTIN = new Set(['String', 'Int', 'Float', 'Boolean', 'ID'])
const offered = new Set([...Object.keys(spec.types), ...BUILTIN])
const desc = (text, indent = '') => text === undefined ? '' : `${indent}"""${text}"""\n`
const has = (type) => offered.has(getNamedType(type).name)

let out = ''
for (const [name, entry] of Object.entries(spec.types)) {
  const t = ref.getType(name)
  if (t === undefined || t === null) throw new Error(`${name} is not in the reference`)
  const fields = entry.fields ?? '*'
  const wanted = (f) => fields === '*' || fields.includes(f)
  const fdesc = entry.fieldDescriptions ?? {}
  out += desc(entry.description)
  if (isScalarType(t)) { out += `scalar ${name}\n\n`; continue }
  if (isEnumType(t)) {
    out += `enum ${name} {\n${t.getValues().filter((v) => wanted(v.name)).map((v) => `  ${v.name}`).join('\n')}\n}\n\n`
    continue
  }
  if (isUnionType(t)) { out += `union ${name} = ${t.getTypes().filter((m) => offered.has(m.name)).map((m) => m.name).join(' | ')}\n\n`; continue }
  const all = Object.values(t.getFields())
  if (fields !== '*') for (const f of fields) if (!all.some((x) => x.name === f)) throw new Error(`${name}.${f} is not in the reference`)
  const lines = []
  for (const f of all) {
    if (!wanted(f.name)) continue
    if (!has(f.type) && fields === '*') continue
    if (!has(f.type)) throw new Error(`${name}.${f.name}: type ${getNamedType(f.type).name} is not offered`)
    if (isInputObjectType(t)) {
      const def = f.defaultValue === undefined ? '' : ` = ${print(astFromValue(f.defaultValue, f.type))}`
      lines.push(desc(fdesc[f.name], '  ') + `  ${f.name}: ${f.type}${def}`)
      continue
    }
    const args = f.args.filter((a) => {
      if (has(a.type)) return true
      if (String(a.type).endsWith('!')) throw new Error(`${name}.${f.name}(${a.name}): required argument of type ${a.type} not offered`)
      return false
    }).map((a) => `${a.name}: ${a.type}${a.defaultValue === undefined ? '' : ` = ${print(astFromValue(a.defaultValue, a.type))}`}`)
    const dep = f.deprecationReason ? ` @deprecated(reason: ${JSON.stringify(f.deprecationReason)})` : ''
    lines.push(desc(fdesc[f.name], '  ') + `  ${f.name}${args.length ? `(${args.join(', ')})` : ''}: ${f.type}${dep}`)
  }
  // An interface we offer in part is implemented by the types offering every field we offer of it.
  const keeps = (i) => offered.has(i.name) && (spec.types[i.name].fields ?? Object.keys(i.getFields())).every((f) => wanted(f))
  const ifaces = (isObjectType(t) || isInterfaceType(t)) ? t.getInterfaces().filter(keeps).map((i) => i.name) : []
  const kind = isInputObjectType(t) ? 'input' : isInterfaceType(t) ? 'interface' : 'type'
  out += `${kind} ${name}${ifaces.length ? ` implements ${ifaces.join(' & ')}` : ''} {\n${lines.join('\n')}\n}\n\n`
}
process.stdout.write(out)
