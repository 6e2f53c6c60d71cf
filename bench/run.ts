import { benchChat } from './chat.js'
import { benchDependencies } from './dependencies.js'
import { benchHttp } from './http.js'
import { benchMoves } from './moves.js'
import { benchPostgres } from './postgres.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 3)

console.log('# planning API benchmarks')
console.log(`node ${process.version}, ${seconds} s per HTTP case, 10 connections`)
for (const line of await benchMoves()) console.log(`- ${line}`)
for (const line of await benchDependencies()) console.log(`- ${line}`)
for (const line of await benchHttp(seconds)) console.log(`- ${line}`)
for (const line of await benchChat()) console.log(`- ${line}`)
for (const line of await benchPostgres(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', seconds)) console.log(`- ${line}`)
