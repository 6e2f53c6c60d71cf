import { benchChat } from './chat.js'
import { benchDependencies } from './dependencies.js'
import { benchHttp, CONNECTIONS } from './http.js'
import { benchMoves } from './moves.js'
import { benchPostgres } from './postgres.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const only = process.env.BENCH_ONLY?.split(',')
const wanted = (name: string) => only === undefined || only.includes(name)

console.log('# planning API benchmarks')
console.log(`node ${process.version}; HTTP: ${CONNECTIONS} connections, ${rounds} alternating rounds of ${seconds} s against bare node:http in its own process`)
const print = (lines: string[]) => { for (const line of lines) console.log(`- ${line}`) }
if (wanted('http')) print(await benchHttp(seconds, rounds))
if (wanted('moves')) print(await benchMoves())
if (wanted('dependencies')) print(await benchDependencies())
if (wanted('postgres')) print(await benchPostgres(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', seconds, rounds))
if (wanted('chat')) print(await benchChat())
