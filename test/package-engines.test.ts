import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// A host installing the package gets our dependencies as their own ranges resolve, without our
// `overrides` (they apply only to this repository's own install). So each production package in
// package-lock.json must be one those ranges pick, and must run on every Node version we support.
const root = fileURLToPath(new URL('..', import.meta.url))
const semver = createRequire(import.meta.url)('semver') as { satisfies: (version: string, range: string) => boolean }
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string, dev?: boolean, engines?: { node?: string }, dependencies?: Record<string, string>, optional?: boolean }>
}
const production = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true)

/** Where Node finds `name` from the package at `path`: its own node_modules, then each parent's. */
function resolved (path: string, name: string): string | undefined {
  let at = path
  for (;;) {
    const candidate = `${at === '' ? '' : `${at}/`}node_modules/${name}`
    if (lock.packages[candidate] !== undefined) return candidate
    if (at === '') return undefined
    const cut = at.lastIndexOf('/node_modules/')
    at = cut === -1 ? '' : at.slice(0, cut)
  }
}

t.test('each production dependency is one its dependents\' ranges pick, with no override', async (t) => {
  const outOfRange: string[] = []
  for (const [path, entry] of production) {
    for (const [name, range] of Object.entries(entry.dependencies ?? {})) {
      const found = resolved(path, name)
      const version = found === undefined ? undefined : lock.packages[found].version
      if (version !== undefined && !semver.satisfies(version, range)) outOfRange.push(`${path} wants ${name}@${range}, the lock has ${version}`)
    }
  }
  t.same(outOfRange, [], 'a host would install these as the lock has them')
})

t.test('each production dependency runs on every Node version the package supports', async (t) => {
  t.ok(production.length > 50, `${production.length} production packages`)
  const refused: string[] = []
  for (const [path, entry] of production) {
    const range = entry.engines?.node
    if (range === undefined || entry.optional === true) continue
    // package.json engines: ^20.19 || ^22.13 || ^24
    for (const node of ['20.19.0', '22.13.0', '24.0.0']) {
      if (!semver.satisfies(node, range)) refused.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs Node ${range}, not ${node}`)
    }
  }
  t.same(refused, [], 'no EBADENGINE on any supported Node')
})
