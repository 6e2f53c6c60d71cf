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
