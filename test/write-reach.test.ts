import t, { type Test } from 'tap'
import { join } from 'node:path'
import { build, P, REPO, OTHER_REPO, SECRET_KEY, WS_OLD } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import { DomainEvents } from '../db/domain-events.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { SecretBox } from '../db/engine/secret-box.js'
import { listenToCommits, reached, writeTransaction } from '../db/engine/transaction.js'
import { createHostSync } from '../db/issue-host/host-sync.js'
import { createStore, openSqliteStore, type PlanningStore } from '../db/store.js'

/**
 * A store of its own on the test fixture's database (the app built it and is closed), telling
 * what each write it commits said of its reach: the repositories (undefined: anything) and the
 * issues whose board rows it changed (undefined: not said).
 */
async function storeWithNotes (t: Test) {
  let database: Record<string, unknown> = { database: join(t.testdir({}), 'planning.db') }
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    database = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
  }
  const app = await build(t, database)
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: 'a-secret-of-the-connection' } })).json().id as string
  await app.close()
  const secrets = SecretBox.fromStrings(SECRET_KEY)
  let store: PlanningStore & { close: () => Promise<void> }
  if (TEST_DATABASE_URL === undefined) store = await openSqliteStore(database.database as string, undefined, secrets)
  else {
    const db = postgresKysely({ url: TEST_DATABASE_URL, schema: database.databaseSchema as string, poolMax: 4 })
    store = { ...createStore(db, new DomainEvents(), secrets), close: async () => await db.destroy() }
  }
  t.teardown(async () => await store.close())
  const notes: Array<{ repositories?: number[], rows?: number[] }> = []
  listenToCommits(store.db, (_version, repositories, boardRows) => {
    notes.push({
      repositories: repositories === undefined ? undefined : [...repositories].sort(),
      rows: boardRows === undefined ? undefined : [...new Set(boardRows)].sort((a, b) => a - b)
    })
  })
  const id = async (repoId: number, number: number) => Number((await store.repositories.issue(repoId, number))!.id)
  /** What the next write said of its reach. */
  const noted = async (write: () => Promise<unknown>) => {
    notes.length = 0
    await write()
    t.equal(notes.length, 1, 'one write committed')
    return notes[0]
  }
  return { store, id, noted, connection }
}

t.test('the parts of a write add what they reached to what its caller declared', async (t) => {
  const { store, id, noted } = await storeWithNotes(t)
  const three = await id(REPO, 3)
  const seven = await id(REPO, 7)

  t.same(await noted(async () => await store.transaction(async (s) => { await s.repositories.updateIssue(REPO, 3, { state: 'closed' }) })),
    { repositories: undefined, rows: undefined }, 'declared nothing: anything')
  t.same(await noted(async () => await store.transaction(async (s) => { await s.repositories.updateIssue(REPO, 3, { state: 'open' }) }, [REPO], [])),
    { repositories: [REPO], rows: [three] }, 'a reopen names its issue')
  t.same(await noted(async () => await store.transaction(async (s) => { await s.repositories.updateIssue(REPO, 3, { title: 'Renamed', state: 'open' }) }, [REPO], [])),
    { repositories: [REPO], rows: [] }, 'a title and an unchanged state name no row')

  const alice = (await store.users.requireLogin('alice'))
  const reopenedAndMoved = await noted(async () => await store.transaction(async (s) => {
    await s.repositories.updateIssue(REPO, 7, { state: 'open' })
    await s.boards.move(alice, WS_OLD, await s.repositories.requireRepository(REPO), 7, P.doing, 'top')
  }, [REPO], []))
  t.same(reopenedAndMoved, { repositories: [REPO], rows: [seven] }, 'a move inside the write adds its rows (here the same issue)')

  t.same(await noted(async () => await store.transaction(async (s) => {
    await s.repositories.updateIssue(REPO, 7, { state: 'closed' })
    await writeTransaction(s.db, async () => {})
  }, [REPO], [])), { repositories: undefined, rows: undefined }, 'a part that says nothing of its reach: anything')
  t.same(await noted(async () => await store.transaction(async (s) => {
    await s.repositories.updateIssue(REPO, 7, { state: 'open' })
    reached(s.db, OTHER_REPO)
  }, [REPO], [])), { repositories: [REPO, OTHER_REPO].sort(), rows: undefined }, 'a repository reached without its rows: the boards are read whole')
  t.same(await noted(async () => await store.transaction(async (s) => { await s.repositories.createIssue(REPO, { number: 50, title: 'New' }) }, [REPO], [])),
    { repositories: [REPO], rows: [await id(REPO, 50)] }, 'an issue opened names its new row')
})

t.test('an import page or a delivery is confined to what the host sync\'s steps say', async (t) => {
  const { store, id, noted, connection: connectionId } = await storeWithNotes(t)
  const local = { id: REPO, owner: 'acme', name: 'api', host_updated_at: null }
  const connection = { id: connectionId, kind: 'github' as const }
  // As the importer's page and a delivery do: confined to nothing but what the steps add.
  const page = async (fn: (sync: ReturnType<typeof createHostSync>) => Promise<unknown>) =>
    await noted(async () => await store.transaction(async (tx) => await fn(createHostSync(tx.db, connection, store.events)), [], []))
  const issue = (number: number, extra: object = {}) => ({ number, title: `Issue ${number}`, state: 'open' as const, updated_at: null, ...extra })

  t.same(await page(async (sync) => { for (const n of [1, 2, 3]) await sync.issue(local, issue(n)) }), { repositories: [REPO], rows: [] }, 'nothing on the board changed')
  t.same(await page(async (sync) => {
    await sync.issue(local, issue(1, { state: 'closed' }))
    await sync.issue(local, issue(2, { labels: [{ name: 'bug', color: null }], assignees: [{ login: 'dana', avatar_url: null }] }))
    await sync.issue(local, issue(7, { title: 'Reopened' }))
    await sync.issue(local, issue(60))
  }), { repositories: [REPO], rows: [await id(REPO, 1), await id(REPO, 7), await id(REPO, 60)].sort((a, b) => a - b) }, 'a close, a reopen and an issue opened name their rows; labels and assignees none')
  t.same(await page(async (sync) => { await sync.milestone(local, { number: 1, title: 'v1.1', updated_at: null }) }), { repositories: [REPO], rows: [] }, 'a milestone')
  const blocked = await id(OTHER_REPO, 1)
  const deleted = await id(REPO, 4)
  await store.transaction(async (tx) => {
    await tx.db.insertInto('dependencies').values({ blocking_id: deleted, blocked_id: blocked, created_at: new Date().toISOString() }).execute()
  })
  t.same(await page(async (sync) => await sync.deleteIssue(local, issue(4))), { repositories: [REPO, OTHER_REPO].sort(), rows: [deleted] },
    'an issue deleted (or transferred) names its row, and its dependencies\' repositories')
  t.same(await page(async (sync) => await sync.permission(await sync.identity({ id: 9, login: 'host-user' }), local, 'write')), { repositories: undefined, rows: undefined }, 'a permission: anything')
  t.same(await page(async (sync) => await sync.bind({ id: 7000, owner: 'team', name: 'new', html_url: 'https://github.com/team/new', updated_at: null })),
    { repositories: undefined, rows: undefined }, 'a repository bound for the first time: anything')
})
