import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface ServerProcess { url: string, pid: number, stop: () => Promise<void> }

/**
 * Starts `script` (a module of this folder, built) as its own Node process and waits for the
 * `listening <url>` line it prints; the benchmark never shares a process with what it measures.
 */
export async function startProcess (script: string, env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  // BENCH_CPU_PROF=<folder>: the API's processes write a CPU profile there when they stop.
  const profile = process.env.BENCH_CPU_PROF !== undefined && script === './app-process.js' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const child: ChildProcess = spawn(process.execPath, [...profile, fileURLToPath(new URL(script, import.meta.url))], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit']
  })
  const lines = createInterface({ input: child.stdout! })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within ${timeoutMs / 1000} s`)), timeoutMs)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
    lines.on('line', (line) => {
      if (!line.startsWith('listening ')) return
      clearTimeout(timer)
      resolve(line.slice('listening '.length))
    })
  })
  return {
    url,
    pid: child.pid!,
    async stop () {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  }
}

/** A process's resident memory (Linux, in MB): `VmRSS` now, `VmHWM` its peak so far. */
function statusMb (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`))
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024
}
export const rssMb = (pid: number): number => statusMb(pid, 'VmRSS')
export const peakMb = (pid: number): number => statusMb(pid, 'VmHWM')
