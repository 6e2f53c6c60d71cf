import { randomBytes } from 'node:crypto'

/** Server-made ids (workspace, pipeline, release report, webhook): 24 lower-case hex characters. */
export function newObjectId (): string {
  const time = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0')
  return time + randomBytes(8).toString('hex')
}

export function nowIso (): string {
  return new Date().toISOString()
}
