import { createHook } from 'node:async_hooks'

/**
 * Keeps one of Node's `process.nextTick` records alive for the life of the process, so that the
 * hidden-class transitions V8 made for it stay cached.
 *
 * Every HTTP request queues several of these records (stream ends, writes, socket resumes). V8
 * caches the shapes objects pass through on a shared root, and that root caps how many
 * transitions it keeps. An app that loads many schemas and route tables fills the root. Once the
 * record's own transition is collected, it cannot come back, and from then on each record builds
 * its shape in the runtime. With the whole API loaded this cost about 5% of an unchanged board
 * read (docs/development.md, "Benchmarks"). Holding one record from before the app loads keeps its transition
 * alive. The hook is on for one `nextTick` call only.
 */
const kept: object[] = []
const hook = createHook({
  init (_id, type, _trigger, resource) {
    if (type === 'TickObject' && kept.length === 0) kept.push(resource)
  }
}).enable()
process.nextTick(() => {})
hook.disable()

export const keptTickRecords: readonly object[] = kept
