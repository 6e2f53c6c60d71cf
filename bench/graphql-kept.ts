import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIG_TOKEN, bigWorkspaceFixture } from './big-fixture.js'
import { graphqlPageBody } from './big-workspace.js'
import { againstFloor, floorLine } from './loaded-floor.js'
import { startProcess } from './processes.js'

/**
 * Issue 47's GraphQL page answered from kept bytes, against its floor, alone: the API on a SQLite
 * file of the big workspace (BENCH_BIG_ISSUES, default 50,000; SQLITE_FILE keeps it between runs),
 * the page at 50 connections in alternating rounds with a bare node:http server answering the same
 * bytes and headers, each side's CPU time per request; then a REST board read (answered before
 * routing) the same way, for comparison. Not part of `npm run bench`; built first:
 *
 *   node dist/bench/graphql-kept.js   (BENCH_SECONDS, BENCH_ROUNDS; BENCH_CPU_PROF=<folder> profiles the API)
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const folder = mkdtempSync(join(tmpdir(), 'gql-kept-'))
const database = process.env.SQLITE_FILE ?? join(folder, 'big.db')
try {
  let seedFile: string | undefined
  if (!existsSync(database)) {
    seedFile = join(folder, 'big.json')
    writeFileSync(seedFile, JSON.stringify(bigWorkspaceFixture(Number(process.env.BENCH_BIG_ISSUES ?? 50_000))))
  }
  const server = await startProcess('./app-process.js', { BENCH_APP_OPTIONS: JSON.stringify({ database, ...(seedFile === undefined ? {} : { seedFile }) }) }, 600_000)
  try {
    const headers = { 'x-authentication-token': BIG_TOKEN, 'content-type': 'application/json' }
    const graphql = await againstFloor(`${server.url}/public/graphql`, server.pid, 'POST', headers, graphqlPageBody(), 50, seconds, rounds)
    console.log(`GraphQL page, kept: ${floorLine(graphql)}`)
    const board = await againstFloor(`${server.url}/p1/repositories/4700/issues/1`, server.pid, 'GET', { 'x-authentication-token': BIG_TOKEN }, undefined, 50, seconds, rounds)
    console.log(`REST issue data, before routing: ${floorLine(board)}`)
  } finally {
    await server.stop()
  }
} finally {
  rmSync(folder, { recursive: true, force: true })
}
