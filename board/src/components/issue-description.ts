/// <reference lib="dom" />
import MarkdownIt, { type Token } from 'markdown-it'
import { Fragment, h, type ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { Card } from '../model.js'
import type { Store } from '../store.js'

// Raw HTML off: a `<script>` or any other tag in a description is text. The tokens become Preact
// elements (never an HTML string), from tags on this list only, with no attribute but a link's.
const markdown = MarkdownIt({ html: false, linkify: true })
const TAGS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'em', 'strong', 's', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'code', 'pre'])
/** Only links that leave for another site: a relative one, or one to this page's origin, would point into this server. */
const OUTSIDE = /^(https?:|mailto:)/i
function leaves (href: string): boolean {
  if (!OUTSIDE.test(href)) return false
  if (/^mailto:/i.test(href)) return true
  try {
    return new URL(href).origin !== globalThis.location?.origin
  } catch {
    return false
  }
}
/** Links open apart from the board, tell the other site nothing of it, and vouch for nothing. */
const LINK = { target: '_blank', rel: 'noopener nofollow' }

interface Open { tag: string, href?: string, start?: string, children: ComponentChildren[] }

function element (open: Open): ComponentChildren {
  if (open.tag === 'a') return open.href === undefined ? h(Fragment, null, ...open.children) : h('a', { href: open.href, ...LINK }, ...open.children)
  if (!TAGS.has(open.tag)) return h(Fragment, null, ...open.children)
  return h(open.tag, open.tag === 'ol' && open.start !== undefined ? { start: open.start } : null, ...open.children)
}

function build (tokens: Token[]): ComponentChildren[] {
  const root: ComponentChildren[] = []
  const stack: Open[] = []
  const add = (node: ComponentChildren) => { (stack.at(-1)?.children ?? root).push(node) }
  for (const token of tokens) {
    if (token.nesting === 1) {
      const href = String(token.attrGet('href') ?? '')
      const start = token.attrGet('start')
      // A tight list's paragraphs are hidden: their text goes straight into the item.
      stack.push({ tag: token.hidden ? '' : token.tag, href: leaves(href) ? href : undefined, start: start === null ? undefined : String(start), children: [] })
    } else if (token.nesting === -1) {
      const open = stack.pop()
      if (open !== undefined) add(element(open))
    } else if (token.type === 'inline') {
      for (const node of build(token.children ?? [])) add(node)
    } else if (token.type === 'softbreak') {
      add('\n')
    } else if (token.type === 'hardbreak') {
      add(h('br', null))
    } else if (token.type === 'hr') {
      add(h('hr', null))
    } else if (token.type === 'code_inline') {
      add(h('code', null, token.content))
    } else if (token.type === 'code_block' || token.type === 'fence') {
      add(h('pre', null, h('code', null, token.content)))
    } else if (token.type === 'image') {
      // Images are not loaded from other sites: a link to one, named by its text.
      const src = String(token.attrGet('src') ?? '')
      const text = token.content === '' ? src : token.content
      add(OUTSIDE.test(src) ? h('a', { href: src, ...LINK }, text) : text)
    } else {
      add(token.content)
    }
  }
  while (stack.length > 0) add(element(stack.pop()!))
  return root
}

/** A description's Markdown as Preact elements: text is only ever text. */
export function descriptionNodes (text: string): ComponentChildren[] {
  return build(markdown.parse(text, {}))
}

/** The description as shown: rendered Markdown, or "No description". */
export function Description ({ text }: { text: string | null | undefined | false }) {
  if (text === undefined) return html`<p class="hint">Loading…</p>`
  if (text === false) return html`<p class="hint">Could not read the description.</p>`
  if (text === null || text.trim() === '') return html`<p class="hint">No description</p>`
  return html`<div class="description">${descriptionNodes(text)}</div>`
}

/** The issue panel's description: read with the one issue's data when the panel opens (boards never carry it). */
export function IssueDescription ({ store, card }: { store: Store, card: Card }) {
  const [text, setText] = useState<string | null | undefined | false>(undefined)
  useEffect(() => {
    setText(undefined)
    store.client.get<{ body?: string }>(`/p1/repositories/${card.repo}/issues/${card.number}`)
      .then((data) => setText(data.body ?? null), (err: Error) => { setText(false); store.say(`Could not read the description of #${card.number}: ${err.message}`, true) })
  }, [card.key, card.title])
  return html`<section aria-labelledby="panel-description">
    <h3 id="panel-description">Description</h3>
    <${Description} text=${text} />
  </section>`
}
