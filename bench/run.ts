import { benchBigWorkspace } from './big-workspace.js'
import { benchBoardPage } from './board-page.js'
import { benchChat } from './chat.js'
import { benchDependencies } from './dependencies.js'
import { benchDependencyInserts } from './dependency-inserts.js'
import { benchGraphql } from './graphql.js'
import { benchImportTime } from './import-time.js'
import { benchHttp, CONNECTIONS, httpTable, type HttpRow } from './http.js'
import { benchMoves } from './moves.js'
import { benchPostgresHttp, benchPostgresWrites, postgresAnswers } from './postgres.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const only = process.env.BENCH_ONLY?.split(',')
const wanted = (name: string) => only === undefined || only.includes(name)
const postgres = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

console.log('# planning API benchmarks')
console.log(`node ${process.version}; HTTP: ${CONNECTIONS} connections, ${rounds} alternating rounds of ${seconds} s against bare node:http in its own process`)
const print = (lines: string[]) => { for (const line of lines) console.log(`- ${line}`) }
const rows: HttpRow[] = []
const pgUp = wanted('postgres') && await postgresAnswers(postgres)
if (wanted('postgres') && !pgUp) console.log(`- PostgreSQL: skipped (no server answers at ${postgres})`)
if (wanted('http')) rows.push(...await benchHttp(seconds, rounds))
if (pgUp) rows.push(...await benchPostgresHttp(postgres, seconds, rounds))
if (rows.length > 0) {
  console.log('')
  for (const line of httpTable(rows, rounds)) console.log(line)
  console.log('')
}
if (wanted('graphql')) print(await benchGraphql(seconds, rounds))
if (wanted('import')) print(benchImportTime())
if (wanted('moves')) print(await benchMoves())
if (wanted('dependencies')) print(await benchDependencies())
if (pgUp) print(await benchPostgresWrites(postgres))
if (wanted('chat')) print(await benchChat())
if (wanted('board-page')) print(await benchBoardPage())
if (wanted('dependency-inserts')) print(await benchDependencyInserts(pgUp || (only?.includes('dependency-inserts') === true && await postgresAnswers(postgres)) ? postgres : undefined))
if (wanted('big-workspace')) {
  const big = await benchBigWorkspace(seconds, rounds, pgUp || (only?.includes('big-workspace') === true && await postgresAnswers(postgres)) ? postgres : undefined)
  console.log('')
  for (const line of httpTable(big.rows, rounds)) console.log(line)
  console.log('')
  print(big.lines)
}
