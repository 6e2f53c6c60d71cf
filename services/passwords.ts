import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

export { MAX_PASSWORD, MIN_PASSWORD, PASSWORD_RULE } from '../schemas/passwords.js'

// N=2^14, r=8, p=1 (as Django's scrypt hasher): 16 MiB and some tens of milliseconds a hash.
const COST = { N: 16384, r: 8, p: 1 }
const KEY_LENGTH = 32

const derive = async (password: string, salt: Buffer, options: ScryptOptions, length: number): Promise<Buffer> =>
  await new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, { ...options, maxmem: 128 * options.N! * options.r! * 2 }, (err, key) => { err === null ? resolve(key) : reject(err) })
  })

/** `scrypt$N$r$p$salt$hash`: the parameters go with the hash, so raising them later keeps old hashes valid. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, COST, KEY_LENGTH)
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** A hash no password matches, checked when the login is unknown so both answers take as long. */
let decoy: Promise<string> | undefined

/** Whether the password matches the stored hash (compared in constant time); undefined hash: checked against a decoy, false. */
export async function verifyPassword (password: string, stored: string | null | undefined): Promise<boolean> {
  const hash = stored ?? await (decoy ??= hashPassword(randomBytes(16).toString('hex')))
  const parts = hash.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [N, r, p] = parts.slice(1, 4).map(Number)
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 1 << 20 || r > 32 || p > 16) return false
  const expected = Buffer.from(parts[5], 'base64url')
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), { N, r, p }, expected.length)
  return timingSafeEqual(key, expected) && stored != null
}
