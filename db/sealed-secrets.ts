import { SEALED_COLUMNS, secretContext } from './issue-host/connections.js'
import { hostedTokenContext } from './issue-host/hosted-imports.js'
import { SEALED_PREFIX, SECRET_KEY_HINT, type SecretBox } from './engine/secret-box.js'
import type { Executor } from './engine/transaction.js'
import { webhookSecretContext } from './webhooks.js'

/**
 * Seals every stored secret that is not sealed with SECRET_KEY yet: plaintext values from before
 * the key was set, and values sealed with SECRET_KEY_PREVIOUS during a rotation. Runs at start-up;
 * each value is replaced only if it is still the one read, so instances starting together agree.
 * Returns how many values were sealed again. Without SECRET_KEY nothing changes.
 */
export async function sealStoredSecrets (db: Executor, box: SecretBox): Promise<number> {
  if (!box.canSeal) return 0
  let sealed = 0
  const connections = await db.selectFrom('connections').select(['id', ...SEALED_COLUMNS]).execute()
  for (const row of connections) {
    for (const column of SEALED_COLUMNS) {
      const stored = row[column]
      if (stored === null || !box.stale(stored)) continue
      const context = secretContext(column, row.id)
      const result = await db.updateTable('connections').set({ [column]: box.seal(box.open(stored, context), context) })
        .where('id', '=', row.id).where(column, '=', stored).executeTakeFirst()
      sealed += Number(result.numUpdatedRows)
    }
  }
  const webhooks = await db.selectFrom('webhooks').select(['id', 'secret']).where('secret', 'is not', null).execute()
  for (const row of webhooks) {
    if (row.secret === null || !box.stale(row.secret)) continue
    const context = webhookSecretContext(row.id)
    const result = await db.updateTable('webhooks').set({ secret: box.seal(box.open(row.secret, context), context) })
      .where('id', '=', row.id).where('secret', '=', row.secret).executeTakeFirst()
    sealed += Number(result.numUpdatedRows)
  }
  // Tokens of hosted imports under way. One that does not open (another key, or kept unsealed by an
  // older version) does not stop the start: its import fails saying so (docs/hosted-import.md).
  const hosted = await db.selectFrom('hosted_imports').select(['id', 'token']).where('token', 'like', `${SEALED_PREFIX}%`).execute()
  for (const row of hosted) {
    if (row.token === null || !box.stale(row.token)) continue
    const context = hostedTokenContext(row.id)
    let plain: string
    try {
      plain = box.open(row.token, context)
    } catch {
      continue
    }
    const result = await db.updateTable('hosted_imports').set({ token: box.seal(plain, context) })
      .where('id', '=', row.id).where('token', '=', row.token).executeTakeFirst()
    sealed += Number(result.numUpdatedRows)
  }
  return sealed
}

/** Refuses to start without SECRET_KEY when stored secrets are sealed: they could not be used. */
export async function requireKeyForSealed (db: Executor, box: SecretBox): Promise<void> {
  if (box.canSeal) return
  const like = `${SEALED_PREFIX}%`
  const connection = await db.selectFrom('connections').select('id').where((eb) => eb.or(SEALED_COLUMNS.map((column) => eb(column, 'like', like)))).executeTakeFirst()
  const webhook = await db.selectFrom('webhooks').select('id').where('secret', 'like', like).executeTakeFirst()
  if (connection !== undefined || webhook !== undefined) {
    throw new Error(`stored secrets are encrypted: set SECRET_KEY to the key they were encrypted with (${SECRET_KEY_HINT} only for a new installation)`)
  }
}

const KEY_CHECK_TEXT = 'planning-api key check'
const KEY_CHECK_CONTEXT = 'key_check:1'

/**
 * SECRET_KEY is the database's key: the check value sealed at the first start with a key opens with
 * it (or with SECRET_KEY_PREVIOUS during a rotation, then it is sealed again with the new key). The
 * first start with a key stores it. Throws, naming the variables, when the key does not open it; the
 * server and the admin CLI then refuse to start. Without SECRET_KEY nothing is checked here
 * (`requireKeyForSealed` refuses a start that needs one).
 */
export async function checkSecretKey (db: Executor, box: SecretBox): Promise<void> {
  if (!box.canSeal) return
  let row = await db.selectFrom('key_check').select('sealed').where('id', '=', 1).executeTakeFirst()
  if (row === undefined) {
    // A database from before the check may hold sealed values already: they must open with this key
    // before it is written down as the database's own (a wrong key would lock the right one out).
    await sealStoredSecrets(db, box)
    // Two instances starting together: the first one's row stays, and this one checks against it.
    await db.insertInto('key_check').values({ id: 1, sealed: box.seal(KEY_CHECK_TEXT, KEY_CHECK_CONTEXT) }).onConflict((oc) => oc.column('id').doNothing()).execute()
    row = await db.selectFrom('key_check').select('sealed').where('id', '=', 1).executeTakeFirstOrThrow()
  }
  let opened: string | undefined
  try {
    opened = box.open(row.sealed, KEY_CHECK_CONTEXT)
  } catch {}
  if (opened !== KEY_CHECK_TEXT) {
    throw new Error('SECRET_KEY is not this database\'s key: its secrets were sealed with a key that is neither SECRET_KEY nor SECRET_KEY_PREVIOUS. ' +
      'Set SECRET_KEY to that key (to rotate: SECRET_KEY the new key and SECRET_KEY_PREVIOUS that one)')
  }
  if (box.stale(row.sealed)) {
    await db.updateTable('key_check').set({ sealed: box.seal(KEY_CHECK_TEXT, KEY_CHECK_CONTEXT) }).where('id', '=', 1).where('sealed', '=', row.sealed).execute()
  }
}
