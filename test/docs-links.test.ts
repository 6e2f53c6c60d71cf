import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** A page's lines outside fenced code blocks (a `# comment` in a shell block is no heading). */
function prose (text: string): string[] {
  let fenced = false
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) { fenced = !fenced; return false }
    return !fenced
  })
}

/** The anchors GitHub makes for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors (text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of prose(text)) {
    const m = /^#{1,6} (.+)$/.exec(line)
    if (m === null) continue
    const slug = m[1].trim().toLowerCase().replaceAll(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

t.test('every relative link and anchor between the README and docs/ resolves', async (t) => {
  let checked = 0
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8')
    for (const line of prose(text)) {
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]
        if (/^[a-z]+:/i.test(target)) continue
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const file = path === '' ? join(root, page) : join(root, dirname(page), path)
        checked++
        if (!existsSync(file)) { t.fail(`${page}: ${target}: no file ${relative(root, file)}`); continue }
        if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor)) t.fail(`${page}: ${target}: no heading #${anchor}`)
      }
    }
  }
  t.ok(checked > 30, `${checked} links checked`)
})

t.test('the anchor rule matches GitHub on the headings these pages use', async (t) => {
  t.same([...anchors('## Connect GitHub, GitHub Enterprise, Gitea or Forgejo\n## Health, metrics and CORS\n```sh\n# no\n```\n## Sign-in\n## Sign-in')],
    ['connect-github-github-enterprise-gitea-or-forgejo', 'health-metrics-and-cors', 'sign-in', 'sign-in-1'])
})
