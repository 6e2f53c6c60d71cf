import { execFileSync } from 'node:child_process'

const RUNS = 7

/** Median milliseconds a fresh process takes to import `specifier` (each import in a process of its own, so nothing is cached). */
function importMs (specifier: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t)`
  const times = Array.from({ length: RUNS }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })))
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]
}

/** What importing the package costs a host app, beside Fastify alone (docs/plugin.md). */
export function benchImportTime (): string[] {
  const fastify = importMs(import.meta.resolve('fastify'))
  const planning = importMs(new URL('../app.js', import.meta.url).href)
  return [`import time (median of ${RUNS} fresh processes): the package ${planning.toFixed(0)} ms, Fastify alone ${fastify.toFixed(0)} ms`]
}
