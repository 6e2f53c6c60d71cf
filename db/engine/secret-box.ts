import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { Invalid, SecretUnreadable } from '../errors.js'

/** Stored values that start with this are ciphertext; anything else is a plaintext value from before SECRET_KEY. */
export const SEALED_PREFIX = 'enc:v1:'

export const SECRET_KEY_HINT = 'make one with `openssl rand -base64 32`'

/** A 32-byte key written as base64 (44 characters) or hex (64); a message naming `name` otherwise. */
export function parseSecretKey (value: string, name = 'SECRET_KEY'): Buffer {
  const text = value.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}={0,1}$/.test(text) ? Buffer.from(text, 'base64') : undefined
  if (key?.length !== 32) throw new Error(`${name} must be 32 bytes written as base64 or hex (${SECRET_KEY_HINT})`)
  return key
}

const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8)

/**
 * Encrypts secrets at rest (issue-host tokens and webhook secrets) with AES-256-GCM under
 * SECRET_KEY; docs/operations.md, "Secrets at rest". A sealed value is
 * `enc:v1:<key id>:<base64url of iv | tag | ciphertext>`, bound to `context` (the column and row it
 * belongs to) so it cannot be moved to another row. The key id (a hash prefix of the key) tells
 * which key sealed it: SECRET_KEY, or SECRET_KEY_PREVIOUS during a rotation.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>()
  private readonly current: string | undefined

  constructor (key?: Buffer, previous?: Buffer) {
    if (key !== undefined) {
      this.current = keyId(key)
      this.keys.set(this.current, key)
    }
    if (previous !== undefined && key !== undefined) this.keys.set(keyId(previous), previous)
  }

  /** From the configured strings (validated again here: host apps pass them without config.ts). */
  static fromStrings (key?: string, previous?: string): SecretBox {
    return new SecretBox(key === undefined ? undefined : parseSecretKey(key), previous === undefined ? undefined : parseSecretKey(previous, 'SECRET_KEY_PREVIOUS'))
  }

  get canSeal (): boolean {
    return this.current !== undefined
  }

  /** Encrypts under SECRET_KEY; without one the value is refused (400) with how to set it. */
  seal (plain: string, context: string): string {
    if (this.current === undefined) throw new Invalid(`storing a secret needs SECRET_KEY on the server (${SECRET_KEY_HINT})`)
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.current)!, iv)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return `${SEALED_PREFIX}${this.current}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`
  }

  /** The plaintext of a stored value (a value without the prefix is plaintext already). */
  open (stored: string, context: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored
    const [id, data] = stored.slice(SEALED_PREFIX.length).split(':')
    const key = this.keys.get(id)
    if (key === undefined) {
      throw new SecretUnreadable(this.current === undefined
        ? 'a stored secret is encrypted but SECRET_KEY is not set'
        : 'a stored secret is encrypted with a key that is neither SECRET_KEY nor SECRET_KEY_PREVIOUS')
    }
    try {
      const raw = Buffer.from(data ?? '', 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
      decipher.setAAD(Buffer.from(context))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretUnreadable('a stored secret does not open with SECRET_KEY (altered, or moved from another row)')
    }
  }

  /** Whether a stored value should be sealed again: plaintext, or sealed with the previous key. */
  stale (stored: string): boolean {
    if (this.current === undefined) return false
    return !stored.startsWith(`${SEALED_PREFIX}${this.current}:`)
  }
}
