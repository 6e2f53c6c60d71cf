import { writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import type { Fixture } from '../schemas/fixture.js'
import { random } from './stats.js'

/** The big workspace's id and its sign-in (docs/development.md, "Benchmarks"). */
export const BIG_WORKSPACE = 'b1gb1gb1gb1gb1gb1gb1gb1g'
/** The owner's token: the HTTP bench's (http.ts `TOKEN`), so its comparisons sign in as the owner. */
export const BIG_TOKEN = 'bench-token-0123456789'
export const BIG_REPOSITORIES = 10
export const BIG_PIPELINES = 12

const LABELS = ['bug', 'feature', 'chore', 'docs', 'ui', 'api', 'db', 'perf', 'security', 'ops', 'p1', 'p2', 'p3', 'good first issue', 'needs review', 'blocked', 'design', 'mobile', 'web', 'infra']
const COLORS = ['d73a4a', 'a2eeef', '0075ca', 'cfd3d7', '7057ff', '008672', 'e4e669', 'd876e3']
const ASSIGNEES = Array.from({ length: 25 }, (_, i) => `dev${String(i + 1).padStart(2, '0')}`)
const WORDS = ['fix', 'add', 'crash', 'login', 'board', 'export', 'slow', 'report', 'sprint', 'label', 'cache', 'search', 'mobile', 'invite', 'webhook', 'epic', 'filter', 'page', 'token', 'import']

/** How many of each a fixture of `issues` issues holds: the issue's table at 50,000, scaled down below that. */
export function bigShape (issues: number) {
  return {
    issues,
    repositories: BIG_REPOSITORIES,
    pipelines: BIG_PIPELINES,
    epics: Math.min(20, Math.floor(issues / 10)),
    epicChildren: Math.min(50, Math.floor(issues / 40)),
    dependencies: Math.min(2000, Math.floor(issues / 25)),
    sprints: 10,
    sprintIssues: Math.min(100, Math.floor(issues / 20))
  }
}

/**
 * The big workspace of issue 47 (default 50,000 open issues in one workspace: 10 repositories,
 * 12 pipelines, 20 epics, 2,000 dependencies, 10 sprints, labels and assignees on every issue) in
 * the fixture format. Deterministic: the same size gives the same file, so runs compare across commits.
 */
export function bigWorkspaceFixture (issues = 50_000): Fixture {
  const shape = bigShape(issues)
  const next = random(47)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]
  const repoId = (i: number) => 4700 + (i % shape.repositories)
  const number = (i: number) => Math.floor(i / shape.repositories) + 1
  const ref = (i: number) => ({ repo_id: repoId(i), issue_number: number(i) })
  const pipelines = Array.from({ length: shape.pipelines }, (_, p) => ({ id: `big-pipeline-${String(p + 1).padStart(2, '0')}`, name: `Pipeline ${p + 1}` }))
  // Every issue is the same small set of things, so the file stays near 300 bytes an issue.
  const fixtureIssues: NonNullable<Fixture['issues']> = []
  for (let i = 0; i < issues; i++) {
    const labels = new Set([pick(LABELS), pick(LABELS)])
    const assignees = new Set([pick(ASSIGNEES), ...(next() < 0.3 ? [pick(ASSIGNEES)] : [])])
    // Earlier pipelines fuller, as on a real board: the first holds about a quarter.
    const pipeline = Math.min(shape.pipelines - 1, Math.floor(shape.pipelines * next() ** 1.6))
    fixtureIssues.push({
      repo_id: repoId(i),
      number: number(i),
      title: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} #${i + 1}`,
      created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      ...(next() < 0.6 ? { estimate: pick([1, 2, 3, 5, 8]) } : {}),
      author: pick(['owner', 'ann', 'ben']),
      pipelines: { [BIG_WORKSPACE]: pipelines[pipeline].id },
      labels: [...labels].map((name) => ({ name, color: COLORS[LABELS.indexOf(name) % COLORS.length] })),
      assignees: [...assignees].map((login) => ({ login, avatar_url: null }))
    })
  }
  // Epics are the first issues; their children follow them, one epic each.
  const epics = Array.from({ length: shape.epics }, (_, e) => ({
    ...ref(e),
    issues: Array.from({ length: shape.epicChildren }, (_, c) => ref(shape.epics + e * shape.epicChildren + c))
  }))
  // Blocking always the earlier issue, so the edges cannot make a loop.
  const edges = new Set<string>()
  const dependencies: NonNullable<Fixture['dependencies']> = []
  while (dependencies.length < shape.dependencies) {
    const a = Math.floor(next() * issues)
    const b = Math.floor(next() * issues)
    if (a === b || edges.has(`${Math.min(a, b)}-${Math.max(a, b)}`)) continue
    edges.add(`${Math.min(a, b)}-${Math.max(a, b)}`)
    dependencies.push({ blocking: ref(Math.min(a, b)), blocked: ref(Math.max(a, b)), created_at: '2025-06-01T00:00:00.000Z' })
  }
  // Sprints in 2030, none started: a start-up has nothing to settle.
  const day = Date.UTC(2030, 0, 7)
  const sprints = Array.from({ length: shape.sprints }, (_, s) => ({
    id: `b1gspr1nt${String(s + 1).padStart(15, '0')}`,
    number: s + 1,
    name: `Sprint ${s + 1}`,
    starts_at: new Date(day + s * 14 * 86_400_000).toISOString(),
    ends_at: new Date(day + (s + 1) * 14 * 86_400_000).toISOString(),
    started: false,
    ended: false,
    issues: Array.from({ length: shape.sprintIssues }, (_, k) => ({ ...ref(issues - 1 - (s * shape.sprintIssues + k)), added_at: '2026-01-01T00:00:00.000Z', open: true }))
  }))
  const permissions = { owner: 'admin' as const, ann: 'write' as const, ben: 'read' as const }
  return {
    users: [{ id: 4701, login: 'owner', token: BIG_TOKEN }, { id: 4702, login: 'ann' }, { id: 4703, login: 'ben' }],
    repositories: Array.from({ length: shape.repositories }, (_, r) => ({ id: 4700 + r, owner: 'bigorg', name: `repo-${r + 1}`, permissions })),
    workspaces: [{ id: BIG_WORKSPACE, name: 'Big', created_at: '2024-01-01T00:00:00.000Z', repositories: Array.from({ length: shape.repositories }, (_, r) => 4700 + r), pipelines }],
    issues: fixtureIssues,
    epics,
    dependencies,
    sprints: [{ workspace_id: BIG_WORKSPACE, length_weeks: 2, starts_on: '2030-01-07', time_zone: 'UTC', carry_over: true, updated_at: '2026-01-01T00:00:00.000Z', sprints, events: [] }]
  }
}

// `node dist/bench/big-fixture.js [issues] [file]`: writes the fixture for SEED_FILE.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const size = Number(process.argv[2] ?? 50_000)
  const file = process.argv[3] ?? 'big-workspace.json'
  writeFileSync(file, JSON.stringify(bigWorkspaceFixture(size)))
  console.log(`${file}: ${size.toLocaleString('en')} issues`)
}
