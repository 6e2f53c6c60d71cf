/** What a batched field's loader gets for each parent asking: the parent object and the field's arguments. */
export interface Query<O, P = Record<string, unknown>> { obj: O, params: P }

type Loader = (queries: Array<Query<unknown, unknown>>, ctx: object) => Promise<unknown[]>
type Resolver = (obj: unknown, params: unknown, ctx: object) => Promise<unknown>

interface Asked { query: Query<unknown, unknown>, resolve: (value: unknown) => void, reject: (err: unknown) => void }
// answers given in this document, by the field's arguments (a few kinds) and then by parent
interface Batch { asked: Asked[], done: Map<string, Map<unknown, Promise<unknown>>> }

/** Objects made from one row each (resolvers/objects.ts): two with the same type and id are the same row. */
const ROWS = new Set(['Issue', 'Pipeline', 'Repository', 'Workspace'])

/**
 * Fields read for a whole page at once, as resolvers: every parent asking a field in the same turn
 * (a list's items are completed in one pass) goes to its loader in one call, one statement for the
 * page. Within a document, a parent asking the same field with the same arguments again (an alias)
 * gets the first answer, and so does another object of the same row (an issue reached many ways):
 * a loader is given each row once, whatever the document repeats. In a mutation's document only
 * the same object is: a row read again after a write must show it. Mercurius's own loaders keyed
 * each call on its parent serialized whole: for a page of 50 issues with a few such fields that
 * was most of the document's allocations.
 */
export function batchedFields (loaders: Record<string, Record<string, Loader>>): Record<string, Record<string, Resolver>> {
  const out: Record<string, Record<string, Resolver>> = {}
  for (const [type, fields] of Object.entries(loaders)) {
    out[type] = {}
    for (const [field, load] of Object.entries(fields)) out[type][field] = batched(load)
  }
  return out
}

function batched (load: Loader): Resolver {
  const batches = new WeakMap<object, Batch>()
  return async (obj, params, ctx) => {
    let batch = batches.get(ctx)
    if (batch === undefined) {
      batch = { asked: [], done: new Map() }
      batches.set(ctx, batch)
    }
    const key = JSON.stringify(params ?? null)
    let byParent = batch.done.get(key)
    if (byParent === undefined) {
      byParent = new Map()
      batch.done.set(key, byParent)
    }
    const parent = parentKey(obj, ctx)
    const known = byParent.get(parent)
    if (known !== undefined) return await known
    const answer = new Promise<unknown>((resolve, reject) => {
      if (batch.asked.length === 0) process.nextTick(run, batch, load, ctx)
      batch.asked.push({ query: { obj, params }, resolve, reject })
    })
    byParent.set(parent, answer)
    return await answer
  }
}

function parentKey (obj: unknown, ctx: object): unknown {
  const row = obj as { __typename?: unknown, id?: unknown }
  if ((ctx as { wrote?: boolean }).wrote === true || typeof row.__typename !== 'string' || !ROWS.has(row.__typename)) return obj
  return `${row.__typename}:${String(row.id)}`
}

function run (batch: Batch, load: Loader, ctx: object): void {
  const asked = batch.asked
  batch.asked = []
  // a loader that throws at once fails its batch as one that rejects does
  Promise.resolve().then(async () => await load(asked.map((a) => a.query), ctx)).then((values) => {
    if (!Array.isArray(values) || values.length !== asked.length) throw new Error(`a batched field's loader answered ${Array.isArray(values) ? values.length : 'no list'} for ${asked.length} asked`)
    for (let i = 0; i < asked.length; i++) asked[i].resolve(values[i])
  }).catch((err: unknown) => {
    for (const a of asked) a.reject(err)
  })
}
