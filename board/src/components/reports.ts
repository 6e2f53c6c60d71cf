/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import {
  burndownChart, cycleTimeChart, daysText, FRAME, fmt, polyline, scopeText, velocityChart,
  type BurndownReport, type CycleTimeReport, type Tick, type VelocityReport
} from '../charts.js'
import { nearestFirst } from '../model.js'
import type { Store } from '../store.js'

interface Sprint { id: string, name: string, starts_at: string, ends_at: string, state: 'active' | 'future' | 'closed' }
interface Release { release_id: string, title: string, state?: string }
/** A read in flight (null), answered (data) or refused (error, the server's message). */
type Loaded<T> = { data: T } | { error: string } | null

export interface BurndownChoice { value: string, label: string, group: 'Sprints' | 'Milestones' | 'Release reports', path: string, file: string }

/** What a burndown can be drawn for: the workspace's sprints (nearest today first), the milestones of the board's issues, the repositories' release reports. */
export interface MilestoneRef { repo: number, number: number, title: string, repoName: string }
export function burndownChoices (sprints: Sprint[], milestones: MilestoneRef[], releases: Release[]): BurndownChoice[] {
  return [
    ...nearestFirst(sprints).map((s) => ({
      value: `sprint:${s.id}`, label: `${s.name}${s.state === 'active' ? ' (current)' : s.state === 'future' ? ' (to come)' : ''}`, group: 'Sprints' as const, path: `/p2/sprints/${s.id}/burndown`, file: `sprint-${s.id}-burndown.csv`
    })),
    ...milestones.map((m) => ({
      value: `milestone:${m.repo}:${m.number}`,
      label: `${m.title} (${m.repoName})`,
      group: 'Milestones' as const,
      path: `/p1/repositories/${m.repo}/milestones/${m.number}/burndown`,
      file: `milestone-${m.repo}-${m.number}-burndown.csv`
    })),
    ...releases.map((r) => ({
      value: `release:${r.release_id}`, label: r.title, group: 'Release reports' as const, path: `/p1/reports/release/${r.release_id}/burndown`, file: `release-${r.release_id}-burndown.csv`
    }))
  ]
}

const loaded = async <T>(read: Promise<T>): Promise<Loaded<T>> => await read.then((data) => ({ data }), (err: Error) => ({ error: err.message }))

/** Saves text as a file: an object address clicked as a download, then let go. */
function saveFile (text: string, filename: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }))
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** The Reports view of a workspace: burndown, velocity and cycle time, each a chart, a table and a CSV download. */
export function Reports ({ store }: { store: Store }) {
  const { state } = store
  const workspace = state.choice?.workspace ?? ''
  const repos = store.repoIds()
  const [sprints, setSprints] = useState<Loaded<Sprint[]>>(null)
  const [releases, setReleases] = useState<Release[]>([])
  const [velocity, setVelocity] = useState<Loaded<VelocityReport>>(null)
  const [cycle, setCycle] = useState<Loaded<CycleTimeReport>>(null)
  const [burndown, setBurndown] = useState<Loaded<BurndownReport>>(null)
  useEffect(() => {
    setSprints(null); setVelocity(null); setCycle(null)
    loaded(store.client.get<Sprint[]>(`/p2/workspaces/${workspace}/sprints`)).then(setSprints)
    loaded(store.client.get<VelocityReport>(`/p2/workspaces/${workspace}/velocity?sprints=6`)).then(setVelocity)
    loaded(store.client.get<CycleTimeReport>(`/p2/workspaces/${workspace}/cycle_time`)).then(setCycle)
    Promise.all(repos.map(async (repo) => await store.client.get<Release[]>(`/p1/repositories/${repo}/reports/releases`).catch(() => [])))
      .then((lists) => setReleases([...new Map(lists.flat().map((r) => [r.release_id, r])).values()]))
  }, [workspace, repos.join(',')])

  const milestones = new Map<string, MilestoneRef>()
  for (const card of state.cards.values()) {
    if (card.milestone === undefined || !repos.includes(card.repo)) continue
    milestones.set(`${card.repo}:${card.milestone.number}`, { repo: card.repo, number: card.milestone.number, title: card.milestone.title, repoName: state.repos.get(card.repo)?.name ?? String(card.repo) })
  }
  const choices = burndownChoices(sprints !== null && 'data' in sprints ? sprints.data : [], [...milestones.values()], releases)
  const chosen = choices.find((c) => c.value === state.burndown) ?? choices[0]
  useEffect(() => {
    setBurndown(null)
    if (chosen !== undefined) loaded(store.client.get<BurndownReport>(chosen.path)).then(setBurndown)
  }, [chosen?.path])

  const csv = (path: string, file: string, what: string) => html`<a class="csv" href=${store.client.href(path)} download=${file} onClick=${(e: Event) => {
    e.preventDefault()
    store.download(path, file, saveFile)
  }}>Download ${what} as CSV</a>`

  return html`<section class="reports" aria-label="Reports">
    <section class="report" aria-labelledby="report-burndown">
      <header class="report-head">
        <h2 id="report-burndown">Burndown</h2>
        ${choices.length > 0 && html`<label>Burndown of
          <select value=${chosen?.value} onChange=${(e: Event) => store.setBurndown((e.target as HTMLSelectElement).value)}>
            ${(['Sprints', 'Milestones', 'Release reports'] as const).map((group) => choices.some((c) => c.group === group) && html`<optgroup key=${group} label=${group}>
              ${choices.filter((c) => c.group === group).map((c) => html`<option key=${c.value} value=${c.value}>${c.label}</option>`)}
            </optgroup>`)}
          </select></label>`}
        ${chosen !== undefined && csv(chosen.path, chosen.file, 'the burndown')}
      </header>
      ${chosen === undefined
        ? html`<${NoBurndown} sprints=${sprints} />`
        : html`<${Shown} value=${burndown} render=${(r: BurndownReport) => html`<${BurndownView} report=${r} name=${chosen.label} />`} />`}
    </section>
    <section class="report" aria-labelledby="report-velocity">
      <header class="report-head">
        <h2 id="report-velocity">Velocity</h2>
        ${csv(`/p2/workspaces/${workspace}/velocity?sprints=6`, 'velocity.csv', 'the velocity')}
      </header>
      <${Shown} value=${velocity} render=${(r: VelocityReport) => html`<${VelocityView} report=${r} />`} />
    </section>
    <section class="report" aria-labelledby="report-cycle">
      <header class="report-head">
        <h2 id="report-cycle">Cycle time</h2>
        ${csv(`/p2/workspaces/${workspace}/cycle_time`, 'cycle-time.csv', 'the cycle time')}
      </header>
      <${Shown} value=${cycle} render=${(r: CycleTimeReport) => html`<${CycleTimeView} report=${r} />`} />
    </section>
  </section>`
}

/** Why there is no burndown to pick: sprints still being read, unreadable, or none set up. */
export function NoBurndown ({ sprints }: { sprints: Loaded<Sprint[]> }) {
  if (sprints === null) return html`<p class="hint">Loading…</p>`
  const setUp = 'error' in sprints ? `the sprints could not be read (${sprints.error}); ` : 'set up sprints (sprint configuration), '
  return html`<p class="hint">Nothing to draw a burndown for yet: ${setUp}give a milestone a start date, or make a release report (both in Settings).</p>`
}

function Shown<T> ({ value, render }: { value: Loaded<T>, render: (data: T) => unknown }) {
  if (value === null) return html`<p class="hint">Loading…</p>`
  if ('error' in value) return html`<p class="hint error">Could not read this report: ${value.error}</p>`
  return render(value.data)
}

/** The frame every chart shares: value ticks on the left, a base line. */
function Axes ({ ticks, unit }: { ticks: Tick[], unit: string }) {
  return html`<g class="axes" aria-hidden="true">
    ${ticks.map((t) => html`<g key=${t.label}><line x1=${FRAME.left} x2=${FRAME.width - FRAME.right} y1=${t.y} y2=${t.y} class="grid" />
      <text x=${FRAME.left - 6} y=${t.y + 4} text-anchor="end">${t.label}</text></g>`)}
    <text x=${4} y=${FRAME.top - 2} class="unit">${unit}</text>
  </g>`
}

const viewBox = `0 0 ${FRAME.width} ${FRAME.height}`

export function BurndownView ({ report, name }: { report: BurndownReport, name: string }) {
  const chart = burndownChart(report)
  const last = report.days.at(-1)
  const summary = `Burndown of ${name}: ${last === undefined ? 'no day measured yet' : `${fmt(last.remaining_points)} points remaining on ${last.date}`}, ` +
    `${report.ideal === null ? 'no ideal line (no due date)' : `ideal from ${fmt(report.ideal[0]?.remaining_points ?? 0)} to 0`}, ${report.scope_changes.length} scope ${report.scope_changes.length === 1 ? 'change' : 'changes'}`
  const measured = new Map(report.days.map((d) => [d.date, d]))
  const ideal = new Map((report.ideal ?? []).map((i) => [i.date, i.remaining_points]))
  return html`<div class="report-body">
    <figure>
      <svg viewBox=${viewBox} role="img" aria-label=${summary} class="chart burndown">
        <${Axes} ticks=${chart.ticks} unit="pts" />
        ${chart.xLabels.map((l) => html`<text key=${l.label} x=${l.x} y=${FRAME.height - 10} text-anchor="middle" aria-hidden="true">${l.label}</text>`)}
        ${chart.scope.map((s, i) => html`<line key=${i} class="scope" x1=${s.x} x2=${s.x} y1=${FRAME.top} y2=${FRAME.height - FRAME.bottom}><title>${s.label}</title></line>`)}
        ${report.ideal !== null && html`<polyline class="ideal" points=${polyline(chart.ideal)} />`}
        <polyline class="actual" points=${polyline(chart.actual)} />
        ${chart.actual.map((p) => html`<circle key=${p.label} class="actual" cx=${p.x} cy=${p.y} r="3.5"><title>${p.label}</title></circle>`)}
      </svg>
      <figcaption><span class="key actual">remaining points</span> ${report.ideal !== null && html`<span class="key ideal">ideal</span>`} <span class="key scope">scope change</span></figcaption>
    </figure>
    <div class="table-box" tabindex="0" role="group" aria-label="Burndown table">
      <table>
        <caption>Burndown of ${name}, by day (${report.time_zone}): points remaining, issues open, points closed, ideal points</caption>
        <thead><tr><th scope="col">Day</th><th scope="col">Remaining</th><th scope="col">Open</th><th scope="col">Closed</th><th scope="col">Ideal</th></tr></thead>
        <tbody>${chart.dates.map((date) => {
          const day = measured.get(date)
          return html`<tr key=${date}><th scope="row">${date}</th><td>${day === undefined ? '' : fmt(day.remaining_points)}</td><td>${day?.remaining_issues ?? ''}</td>
            <td>${day === undefined ? '' : fmt(day.closed_points)}</td><td>${ideal.has(date) ? fmt(ideal.get(date)!) : ''}</td></tr>`
        })}</tbody>
      </table>
      ${report.scope_changes.length > 0 && html`<h3>Scope changes</h3><ul class="scope-list">${report.scope_changes.map((c, i) => html`<li key=${i}>
        <time datetime=${c.at}>${new Date(c.at).toLocaleString()}</time> #${c.issue_number} ${scopeText(c)}</li>`)}</ul>`}
    </div>
  </div>`
}

export function VelocityView ({ report }: { report: VelocityReport }) {
  if (report.sprints.length === 0) return html`<p class="hint">No closed sprint yet: velocity counts the points closed in each sprint once it has ended.</p>`
  const chart = velocityChart(report)
  const summary = `Velocity of the last ${report.sprints.length} closed ${report.sprints.length === 1 ? 'sprint' : 'sprints'}: ` +
    `${report.sprints.map((s) => `${s.name} ${fmt(s.points_closed)}`).join(', ')} points; average ${fmt(report.average_points)} points`
  return html`<div class="report-body">
    <figure>
      <svg viewBox=${viewBox} role="img" aria-label=${summary} class="chart velocity">
        <${Axes} ticks=${chart.ticks} unit="pts" />
        ${chart.bars.map((b) => html`<g key=${b.label}><rect class="bar" x=${b.x} y=${b.y} width=${b.width} height=${b.height}><title>${b.label}</title></rect>
          <text x=${b.x + b.width / 2} y=${FRAME.height - 10} text-anchor="middle" aria-hidden="true">${b.name}</text></g>`)}
        <line class="average" x1=${FRAME.left} x2=${FRAME.width - FRAME.right} y1=${chart.average} y2=${chart.average}><title>average ${fmt(report.average_points)} pts</title></line>
      </svg>
      <figcaption><span class="key bar">points closed</span> <span class="key average">average</span></figcaption>
    </figure>
    <div class="table-box" tabindex="0" role="group" aria-label="Velocity table">
      <table>
        <caption>Points and issues closed per sprint</caption>
        <thead><tr><th scope="col">Sprint</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Points closed</th><th scope="col">Issues closed</th></tr></thead>
        <tbody>${report.sprints.map((s) => html`<tr key=${s.id}><th scope="row">${s.name}</th><td>${s.starts_at.slice(0, 10)}</td><td>${s.ends_at.slice(0, 10)}</td>
          <td>${fmt(s.points_closed)}</td><td>${s.issues_closed}</td></tr>`)}</tbody>
        <tfoot><tr><th scope="row" colspan="3">Average</th><td>${fmt(report.average_points)}</td><td>${fmt(report.average_issues)}</td></tr></tfoot>
      </table>
    </div>
  </div>`
}

export function CycleTimeView ({ report }: { report: CycleTimeReport }) {
  if (report.count === 0) return html`<p class="hint">No issue closed from ${report.from.slice(0, 10)} to ${report.to.slice(0, 10)} after entering the start pipeline.</p>`
  const chart = cycleTimeChart(report)
  const percentiles = (['p50', 'p85', 'p95'] as const).map((p) => `${p} ${report[p] === null ? '–' : daysText(report[p]!)}`).join(', ')
  const summary = `Cycle time of ${report.count} closed ${report.count === 1 ? 'issue' : 'issues'} from ${report.from.slice(0, 10)} to ${report.to.slice(0, 10)}: ${percentiles}`
  return html`<div class="report-body">
    <figure>
      <svg viewBox=${viewBox} role="img" aria-label=${summary} class="chart cycle">
        <${Axes} ticks=${chart.ticks} unit=${chart.unit} />
        <text x=${FRAME.left} y=${FRAME.height - 10} aria-hidden="true">${report.from.slice(0, 10)}</text>
        <text x=${FRAME.width - FRAME.right} y=${FRAME.height - 10} text-anchor="end" aria-hidden="true">${report.to.slice(0, 10)}</text>
        ${chart.lines.map((l) => html`<g key=${l.label}><line class="percentile" x1=${FRAME.left} x2=${FRAME.width - FRAME.right} y1=${l.y} y2=${l.y}><title>${l.label}</title></line>
          <text x=${FRAME.width - FRAME.right - 2} y=${l.y - 3} text-anchor="end" aria-hidden="true">${l.label}</text></g>`)}
        ${chart.dots.map((d, i) => html`<circle key=${i} class="dot" cx=${d.x} cy=${d.y} r="4"><title>${d.label}</title></circle>`)}
      </svg>
      <figcaption>${percentiles}</figcaption>
    </figure>
    <div class="table-box" tabindex="0" role="group" aria-label="Cycle time table">
      <table>
        <caption>Time from entering the start pipeline to closing</caption>
        <thead><tr><th scope="col">Issue</th><th scope="col">Started</th><th scope="col">Closed</th><th scope="col">Took</th></tr></thead>
        <tbody>${report.issues.map((i) => html`<tr key=${`${i.repo_id}#${i.issue_number}`}><th scope="row" class="title">#${i.issue_number} ${i.title}</th>
          <td>${i.started_at.slice(0, 10)}</td><td>${i.closed_at.slice(0, 10)}</td><td>${daysText(i.days)}</td></tr>`)}</tbody>
      </table>
    </div>
  </div>`
}
