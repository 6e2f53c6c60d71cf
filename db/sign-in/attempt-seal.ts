import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

// A sign-in under way keeps its PKCE verifier, nonce and return path (which may hold an invite
// link) encrypted under a key derived from its `state`. The table holds only the state's digest, so
// the stored row opens only with the state the provider sends back to the callback: reading the
// database gives nothing usable, and no server key is needed (docs/sign-in.md, "How tokens are kept").
const PREFIX = 'seal:v1:'

const keyOf = (state: string): Buffer => Buffer.from(hkdfSync('sha256', state, '', 'planning sign-in attempt', 32))

/** The attempt's fields sealed with a key from `state`, each bound to its field's name. */
export function sealAttempt<T extends Record<string, string>> (state: string, fields: T): T {
  const key = keyOf(state)
  const sealed: Record<string, string> = {}
  for (const [name, value] of Object.entries(fields)) {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(name))
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()])
    sealed[name] = PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
  }
  return sealed as T
}

/**
 * The fields opened with `state`; undefined when one does not open (altered, moved from another
 * attempt, or unsealed: an attempt stored in the clear by an older version is refused like an
 * unknown state, so a row cannot be downgraded to plain text; the person signs in again).
 */
export function openAttempt<T extends Record<string, string>> (state: string, fields: T): T | undefined {
  const key = keyOf(state)
  const opened: Record<string, string> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (!value.startsWith(PREFIX)) return undefined
    try {
      const raw = Buffer.from(value.slice(PREFIX.length), 'base64url')
      if (raw.length < 28) return undefined
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12), { authTagLength: 16 }).setAAD(Buffer.from(name))
      decipher.setAuthTag(raw.subarray(12, 28))
      opened[name] = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }
  return opened as T
}
