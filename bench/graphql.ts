import autocannon from 'autocannon'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { benchFixture, CONNECTIONS, startInstances, TOKEN, WORKSPACE } from './http.js'

interface Load { rps: number, p50: number, p99: number }

async function load (url: string, seconds: number, body?: string): Promise<Load> {
  const headers: Record<string, string> = { 'x-authentication-token': TOKEN, 'content-type': 'application/json' }
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, method: body === undefined ? 'GET' : 'POST', body })
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

async function graphql (url: string, query: string): Promise<any> {
  const res = await fetch(`${url}/public/graphql`, { method: 'POST', headers: { 'x-authentication-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
  const json = await res.json() as { data: any, errors?: unknown[] }
  if (res.status !== 200 || json.errors !== undefined) throw new Error(`GraphQL ${res.status}: ${JSON.stringify(json).slice(0, 500)}`)
  return json.data
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * Issue 46's GraphQL goals: a GraphQL read against its REST twin on the same 1,000-issue board
 * (a fifth of the issues labelled), in alternating rounds at 50 connections; each line gives both
 * throughputs, their ratio (median of the rounds'), and the GraphQL p99.
 */
export async function benchGraphql (seconds: number, rounds: number): Promise<string[]> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-graphql-'))
  const file = join(folder, 'bench.db')
  const base = benchFixture()
  const fixture = { ...base, issues: base.issues.map((i, n) => n % 5 === 0 ? { ...i, labels: [{ name: 'bug', color: 'd73a4a' }] } : i) }
  const store = await openSqliteStore(file)
  await loadFixture(store, fixture)
  await store.close()
  const [instance] = await startInstances(1, { database: file })
  const lines: string[] = []
  try {
    const ws = await graphql(instance.url, `{ workspace(id: "${WORKSPACE}") { pipelinesConnection { nodes { id } } } }`)
    const pipeline = ws.workspace.pipelinesConnection.nodes[0].id as string
    const fields = 'id number title state htmlUrl estimate { value } repository { ghId name } assignees { nodes { login } } labels { nodes { name color } } ' +
      `pipelineIssue(workspaceId: "${WORKSPACE}") { pipeline { id name } }`
    const page = (filters: string) => JSON.stringify({ query: `{ searchIssuesByPipeline(pipelineId: "${pipeline}", filters: ${filters}, first: 50) { totalCount pageInfo { hasNextPage endCursor } nodes { ${fields} } } }` })
    const cases = [
      { name: 'searchIssuesByPipeline, first 50 of a 250-issue pipeline, vs GET board (1,000 issues)', rest: '/p1/repositories/1/board', body: page('{}') },
      { name: 'searchIssuesByPipeline with a label filter, first 50, vs GET board', rest: '/p1/repositories/1/board', body: page('{ labels: { in: ["bug"] } }') },
      { name: 'issueByInfo vs GET issue data', rest: '/p1/repositories/1/issues/500', body: JSON.stringify({ query: `{ issueByInfo(repositoryGhId: 1, issueNumber: 500) { ${fields} } }` }) }
    ]
    for (const c of cases) {
      await graphql(instance.url, JSON.parse(c.body).query)
      await load(`${instance.url}${c.rest}`, 1)
      await load(`${instance.url}/public/graphql`, 1, c.body)
      const ratios: number[] = []
      const gql: Load[] = []
      const rest: Load[] = []
      for (let r = 0; r < rounds; r++) {
        rest.push(await load(`${instance.url}${c.rest}`, seconds))
        gql.push(await load(`${instance.url}/public/graphql`, seconds, c.body))
        ratios.push(gql.at(-1)!.rps / rest.at(-1)!.rps)
      }
      const mean = (xs: Load[], k: keyof Load) => xs.reduce((s, x) => s + x[k], 0) / xs.length
      lines.push(`SQLite, GraphQL ${c.name}: ${mean(gql, 'rps').toFixed(0)} vs ${mean(rest, 'rps').toFixed(0)} req/s, ratio ${median(ratios).toFixed(2)} ` +
        `(${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}); GraphQL p50 ${mean(gql, 'p50').toFixed(1)} ms, p99 ${mean(gql, 'p99').toFixed(1)} ms; REST p99 ${mean(rest, 'p99').toFixed(1)} ms`)
    }
  } finally {
    await instance.stop()
    rmSync(folder, { recursive: true, force: true })
  }
  return lines
}
