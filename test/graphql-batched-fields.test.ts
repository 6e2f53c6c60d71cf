import t from 'tap'
import { batchedFields, type Query } from '../plugins/graphql/batched-fields.js'

// Fields read for a whole page at once (plugins/graphql/batched-fields.ts), without a server: what
// the loader is given, what each parent gets back, and failures.
interface Row { id: number }
const rows: Row[] = [{ id: 1 }, { id: 2 }, { id: 3 }]

t.test('the parents asking in one turn go to the loader in one call, each getting its own answer', async (t) => {
  const calls: Array<Array<Query<Row>>> = []
  const { Issue } = batchedFields({
    Issue: { async title (queries: Array<Query<Row>>) { calls.push(queries); return queries.map((q) => `#${q.obj.id} ${JSON.stringify(q.params)}`) } }
  } as never)
  const ctx = {}
  const answers = await Promise.all(rows.map(async (r) => await Issue.title(r, {}, ctx)))
  t.same(answers, ['#1 {}', '#2 {}', '#3 {}'])
  t.equal(calls.length, 1, 'one call')
  t.same(calls[0].map((q) => q.obj.id), [1, 2, 3])
  // a later turn is a new call; another document (context) has its own
  t.equal(await Issue.title({ id: 4 }, { first: 2 }, ctx), '#4 {"first":2}')
  t.equal(await Issue.title(rows[0], {}, {}), '#1 {}')
  t.equal(calls.length, 3)
})

t.test('within a document, the same parent with the same arguments is answered once; other arguments are asked', async (t) => {
  const asked: string[] = []
  const { Issue } = batchedFields({
    Issue: { async labels (queries: Array<Query<Row>>) { asked.push(...queries.map((q) => `${q.obj.id}:${JSON.stringify(q.params)}`)); return queries.map((q) => q.obj.id * 10) } }
  } as never)
  const ctx = {}
  const ask = async (first: number) => await Issue.labels(rows[0], { first }, ctx)
  const first = await Promise.all([ask(1), ask(1), ask(2)])
  t.same(first, [10, 10, 10])
  t.equal(await Issue.labels(rows[0], { first: 1 }, ctx), 10, 'a later turn gets the kept answer')
  t.same(asked, ['1:{"first":1}', '1:{"first":2}'])
})

t.test('a failed read fails every parent of its batch; a loader answering the wrong count is a failure, not a wrong answer', async (t) => {
  const { Issue } = batchedFields({
    Issue: {
      async body () { throw new Error('the database is away') },
      async state (queries: unknown[]) { return queries.slice(1).map(() => 'open') }
    }
  } as never)
  const ctx = {}
  const failed = await Promise.allSettled(rows.map(async (r) => await Issue.body(r, {}, ctx)))
  t.same(failed.map((f) => f.status === 'rejected' ? (f.reason as Error).message : 'answered'), ['the database is away', 'the database is away', 'the database is away'])
  const short = await Promise.allSettled(rows.map(async (r) => await Issue.state(r, {}, ctx)))
  t.ok(short.every((s) => s.status === 'rejected' && /answered 2 for 3 asked/.test((s.reason as Error).message)), 'each parent gets the error')
})

t.test('objects of one row (type and id) are one parent, except in a mutation\'s document; a loader that throws at once fails its batch', async (t) => {
  const given: number[] = []
  const { Issue } = batchedFields({
    Issue: {
      async title (queries: Array<Query<Row>>) { given.push(queries.length); return queries.map((q) => `#${q.obj.id}`) },
      body () { throw new Error('thrown before any promise') }
    }
  } as never)
  const copies = [1, 1, 1, 2].map((id) => ({ __typename: 'Issue', id }))
  const ctx = {}
  t.same(await Promise.all(copies.map(async (o) => await Issue.title(o, {}, ctx))), ['#1', '#1', '#1', '#2'])
  t.same(given, [2], 'one document: each row once')
  given.length = 0
  const mutation = { wrote: true }
  t.same(await Promise.all(copies.map(async (o) => await Issue.title(o, {}, mutation))), ['#1', '#1', '#1', '#2'])
  t.same(given, [4], 'a mutation\'s document: each object')
  given.length = 0
  const other = [{ __typename: 'Sprint', id: 1 }, { __typename: 'Sprint', id: 1 }]
  await Promise.all(other.map(async (o) => await Issue.title(o, {}, {})))
  t.same(given, [1, 1], 'another document each: nothing shared')
  given.length = 0
  const ctx2 = {}
  await Promise.all(other.map(async (o) => await Issue.title(o, {}, ctx2)))
  t.same(given, [2], 'objects of other types: each object, as their content may differ')
  const thrown = await Promise.allSettled(copies.map(async (o) => await Issue.body(o, {}, {})))
  t.ok(thrown.every((r) => r.status === 'rejected' && (r.reason as Error).message === 'thrown before any promise'))
})
