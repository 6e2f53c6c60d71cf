import t from 'tap'
import { readFileSync } from 'node:fs'
import { buildClientSchema, buildSchema, getIntrospectionQuery } from 'graphql'
import { build } from './helper.js'
// @ts-expect-error: a plain script, no declarations
import { conflicts, coverageTable, withTable } from '../scripts/graphql-coverage.mjs'

const reference = buildSchema(readFileSync(new URL('./fixtures/graphql/reference.graphql', import.meta.url), 'utf8'))
const ours = buildSchema(readFileSync(new URL('../plugins/graphql/schema/schema.graphql', import.meta.url), 'utf8'))

t.test('our introspection conflicts with nothing in the reference schema', async (t) => {
  const app = await build(t)
  const res = await app.as('carol', { method: 'POST', url: '/public/graphql', payload: { query: getIntrospectionQuery() } })
  t.equal(res.statusCode, 200)
  const served = buildClientSchema(res.json().data)
  t.same(conflicts(served, reference), [])
  t.ok(Object.keys(served.getQueryType()!.getFields()).length >= 9)
})

t.test('the checker sees a conflict when there is one', async (t) => {
  const bad = buildSchema('type Query { issueByInfo(repositoryGhId: Int, issueNumber: Int): Issue } type Issue { id: ID number: String! }')
  const found: string[] = conflicts(bad, reference)
  t.ok(found.some((c) => c.includes('Issue.id')))
  t.ok(found.some((c) => c.includes('Issue.number')))
  t.ok(found.some((c) => c.includes('issueByInfo')))
})

t.test('docs/graphql.md carries the current coverage table', async (t) => {
  const doc = readFileSync(new URL('../docs/graphql.md', import.meta.url), 'utf8')
  t.equal(withTable(doc, coverageTable(ours, reference)), doc, 'run: node scripts/graphql-coverage.mjs test/fixtures/graphql/reference.graphql')
})
