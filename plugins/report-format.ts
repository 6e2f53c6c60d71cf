import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '../schemas/common.js'

/** `?format=csv` (or `Accept: text/csv`) on every report and on the board answer. */
export const ReportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'csv: a header row and one row per item, for spreadsheets' }))
})

export type Cell = string | number | boolean | null | undefined

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or edge spaces,
 * quotes doubled. Text that a spreadsheet would run as a formula (= + - @, tab, carriage return
 * first) gets a leading apostrophe; numbers are written as they are. A semicolon or a tab quotes
 * the field too: spreadsheets in locales whose list separator is `;` (or a tab-separated paste)
 * would otherwise split it there, and the part after it could start a formula.
 */
export function csvField (value: Cell): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  let text = value
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",;\t\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A header row and the rows, CRLF-terminated as RFC 4180 has it. */
export function toCsv (header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',') + '\r\n').join('')
}

/** Whether the caller asked for CSV: `?format=csv`, or an Accept header naming text/csv (and not ?format=json). */
export function wantsCsv (request: FastifyRequest): boolean {
  const format = (request.query as { format?: string } | undefined)?.format
  if (format !== undefined) return format === 'csv'
  const accept = request.headers.accept ?? ''
  return /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept)
}

/** A board as one row per issue, in board order. */
interface BoardIssueRow { issue_number: number, is_epic: boolean, estimate?: { value: number }, position?: number }

export function boardCsv (board: { pipelines: Array<{ id: string, name: string, issues: BoardIssueRow[] }> }): string {
  const rows: Cell[][] = []
  for (const pipeline of board.pipelines) {
    for (const [index, issue] of pipeline.issues.entries()) {
      rows.push([pipeline.id, pipeline.name, index, issue.issue_number, issue.estimate?.value, issue.is_epic, issue.position])
    }
  }
  return toCsv(['pipeline_id', 'pipeline_name', 'index', 'issue_number', 'estimate', 'is_epic', 'position'], rows)
}

/** Sends the report as JSON, or as a CSV download when asked. */
export async function sendReport<T> (request: FastifyRequest, reply: FastifyReply, report: T, csv: () => string, filename = 'report.csv'): Promise<T> {
  if (!wantsCsv(request)) return report
  reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`)
  return await reply.send(csv()) as unknown as T
}
