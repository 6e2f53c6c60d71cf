/// <reference lib="dom" />
import { build } from 'esbuild'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Page } from 'playwright-core'
import { BIG_TOKEN, bigWorkspaceFixture } from './big-fixture.js'
import { CHROMIUM } from './board-page.js'
import { startProcess } from './processes.js'

/**
 * Issue 47's board-page scroll, traced: the figures `boardPageFigures` times in wall-clock, here as
 * the main thread's CPU time (which the machine's other work does not stretch), so two versions of
 * the page compare on a loaded machine. Not part of `npm run bench`:
 *
 *   NODE_OPTIONS=--import=tsx node bench/scroll-trace.ts prepare <db>
 *     the 50,000-issue fixture loaded into a SQLite file, once
 *   NODE_OPTIONS=--import=tsx node bench/scroll-trace.ts page <tree> <folder>
 *     the page's files of a checkout (`git archive <commit> board | tar -x -C <tree>`), its script
 *     bundled with this checkout's packages, into a folder the server takes as `boardPageFiles`
 *   NODE_OPTIONS=--import=tsx node bench/scroll-trace.ts run <db> <folder> [label]
 *     a server on the stored workspace with that page, the owner signed in, the board read whole,
 *     then the bench's scroll (the first column, 200 frames of 600 px) traced (`devtools.timeline`,
 *     `v8.gc`): one JSON line of milliseconds of CPU over the scroll (the main thread's tasks; the
 *     longest; each phase; full collections, with the heap before and after), and the long-task
 *     observer's longest, in wall time, as the bench has it
 *   NODE_OPTIONS=--import=tsx node bench/scroll-trace.ts shot <db> <folder> <png>
 *     a screenshot of the board read whole (two versions' pictures compare byte for byte)
 */
const [command, ...args] = process.argv.slice(2)
const appProcess = import.meta.url.endsWith('.ts') ? './app-process.ts' : './app-process.js'
const CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.gc', 'toplevel', 'blink.user_timing']

if (command === 'prepare') {
  const folder = mkdtempSync(join(tmpdir(), 'scroll-trace-'))
  try {
    const seed = join(folder, 'big.json')
    writeFileSync(seed, JSON.stringify(bigWorkspaceFixture(50_000)))
    const server = await startProcess(appProcess, { BENCH_APP_OPTIONS: JSON.stringify({ database: resolve(args[0]), seedFile: seed, logLevel: 'silent' }) }, 600_000)
    await server.stop()
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
} else if (command === 'page') {
  const [tree, out] = args.map((a) => resolve(a))
  mkdirSync(out, { recursive: true })
  for (const name of ['index.html', 'board.css', 'icon.svg']) copyFileSync(join(tree, 'board', name), join(out, name))
  const nodePaths = [fileURLToPath(new URL('../node_modules', import.meta.url))]
  await build({ entryPoints: [join(tree, 'board/src/main.ts')], bundle: true, format: 'esm', target: 'es2022', minify: true, outfile: join(out, 'board.js'), legalComments: 'none', logLevel: 'warning', nodePaths })
} else if (command === 'run' || command === 'shot') {
  const [db, folder, label] = args
  if (!existsSync(db)) throw new Error(`no database at ${db}: run prepare first`)
  await withBoard(resolve(db), resolve(folder), async (page) => {
    if (command === 'shot') {
      await page.screenshot({ path: label })
      return
    }
    const load = loadavg()[0]
    const browser = page.context().browser()!
    await browser.startTracing(page, { categories: CATEGORIES })
    // A string, not a function: tsx's transform would name the function's inner closures with a helper the page lacks.
    const longtask = await page.evaluate(`new Promise((resolve) => {
      let max = 0
      const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) max = Math.max(max, e.duration) })
      observer.observe({ type: 'longtask' })
      const scroller = document.querySelector('[aria-label="Pipeline 1"]').parentElement
      let step = 0
      performance.mark('scroll-start')
      const tick = () => {
        scroller.scrollTop = step * 600
        if (++step < 200) requestAnimationFrame(tick)
        else setTimeout(() => { performance.mark('scroll-end'); observer.disconnect(); resolve(max) }, 100)
      }
      requestAnimationFrame(tick)
    })`) as number
    const trace = JSON.parse((await browser.stopTracing()).toString()) as { traceEvents: TraceEvent[] }
    console.log(JSON.stringify({ label, load: Number(load.toFixed(2)), longtask: Math.round(longtask), ...figures(trace.traceEvents) }))
  })
} else {
  console.error('usage: scroll-trace.ts prepare <db> | page <tree> <folder> | run <db> <folder> [label] | shot <db> <folder> <png>')
  process.exitCode = 1
}

/** A server on `db` with the page in `folder`, the owner signed in and every read of the board done. */
async function withBoard (db: string, folder: string, use: (page: Page) => Promise<void>): Promise<void> {
  const server = await startProcess(appProcess, { BENCH_APP_OPTIONS: JSON.stringify({ database: db, boardPageFiles: folder, logLevel: 'silent' }) }, 120_000)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } })
    let inFlight = 0
    let lastDone = Date.now()
    const counted = (r: { url: () => string }) => !r.url().endsWith('/live')
    page.on('request', (r) => { if (counted(r)) inFlight++ })
    const done = (r: { url: () => string }) => { if (counted(r)) { inFlight--; lastDone = Date.now() } }
    page.on('requestfinished', done)
    page.on('requestfailed', done)
    await page.goto(`${server.url}/`)
    await page.getByText('Use an API token').click()
    await page.getByLabel('API token').fill(BIG_TOKEN)
    await page.getByRole('button', { name: 'Use token' }).click()
    // The whole board, not its first rows: the status line no longer says it is loading.
    await page.waitForFunction(() => !(document.querySelector('.status')?.textContent ?? '').includes('Loading') &&
      document.querySelector('[aria-label=Board] li.card .title') !== null, undefined, { timeout: 300_000 })
    // Then no read for a second (the live stream left out), as the bench waits before it scrolls.
    const quiet = () => inFlight <= 0 && Date.now() - lastDone >= 1000
    while (!quiet()) await new Promise((resolve) => setTimeout(resolve, 50))
    await use(page)
  } finally {
    await browser.close()
    await server.stop()
  }
}

interface TraceEvent { name: string, ph: string, ts: number, dur?: number, tdur?: number, pid: number, tid: number, args?: Record<string, any> }

/** CPU time (`tdur`) on the page's main thread between the scroll's marks, in ms. */
function figures (events: TraceEvent[]) {
  const start = events.find((e) => e.name === 'scroll-start')
  const end = events.find((e) => e.name === 'scroll-end')
  if (start === undefined || end === undefined) throw new Error('the scroll\'s marks are not in the trace')
  const main = events.filter((e) => e.pid === start.pid && e.tid === start.tid && e.ph === 'X' && e.ts >= start.ts && e.ts <= end.ts)
    .sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))
  const ms = (us: number) => Math.round(us / 100) / 10
  const tasks = main.filter((e) => e.name === 'ThreadControllerImpl::RunTask')
  // Each kind's CPU, an event nested in another of its kind counted once.
  const kind = (...names: string[]) => {
    let total = 0
    let until = -1
    for (const e of main) {
      if (!names.includes(e.name) || e.ts < until) continue
      total += e.tdur ?? 0
      until = e.ts + (e.dur ?? 0)
    }
    return ms(total)
  }
  const major = main.filter((e) => e.name === 'MajorGC')
  const longest = tasks.reduce<TraceEvent | undefined>((m, t) => (t.tdur ?? 0) > (m?.tdur ?? -1) ? t : m, undefined)
  return {
    tasks: ms(tasks.reduce((n, t) => n + (t.tdur ?? 0), 0)),
    longest: ms(longest?.tdur ?? 0),
    // That task's wall time: the machine's other work stretches it.
    longestWall: ms(longest?.dur ?? 0),
    // Script includes what it forces: the bench's frame callback setting scrollTop lays the page out.
    script: kind('FireAnimationFrame', 'EventDispatch', 'FunctionCall', 'TimerFire'),
    style: kind('UpdateLayoutTree'),
    layout: kind('Layout'),
    prePaint: kind('PrePaint'),
    paint: kind('Paint'),
    layerize: kind('Layerize'),
    hitTest: kind('HitTest'),
    majorGc: major.map((e) => `${ms(e.tdur ?? 0)} (${Math.round((e.args?.usedHeapSizeBefore ?? 0) / 1e6)} → ${Math.round((e.args?.usedHeapSizeAfter ?? 0) / 1e6)} MB)`),
    incrementalMarking: kind('V8.GC_MC_INCREMENTAL'),
    minorGc: kind('MinorGC')
  }
}
