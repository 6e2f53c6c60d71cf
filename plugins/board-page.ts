import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export interface BoardPageOptions {
  /** the folder holding the page's files (the single executable unpacks its own); default: the package's `board/` */
  files?: string
}

const TYPES = {
  'index.html': 'text/html; charset=utf-8',
  'board.css': 'text/css; charset=utf-8',
  'board.js': 'text/javascript; charset=utf-8',
  'icon.svg': 'image/svg+xml'
} as const
type PageFile = keyof typeof TYPES
export const BOARD_PAGE_FILES = Object.keys(TYPES) as PageFile[]

// The page talks to this server only; nothing else may be loaded or framed, but the issue hosts'
// avatars. No inline script.
const policy = (images: string[]) =>
  `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src ${["'self'", ...images].join(' ')}; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
const POLICY = policy([])

/** Where the connected hosts serve avatars from: github.com's avatar server, each other host's own address. */
export function avatarOrigins (connections: Array<{ kind: string, web_url: string }>): string[] {
  const origins = new Set<string>()
  for (const connection of connections) {
    let url: URL
    try {
      url = new URL(connection.web_url)
    } catch {
      continue
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue
    if (url.hostname === 'github.com') {
      origins.add('https://avatars.githubusercontent.com')
      continue
    }
    origins.add(url.origin)
    // GitHub Enterprise with subdomain isolation serves them from avatars.HOST.
    if (connection.kind === 'github') origins.add(`${url.protocol}//avatars.${url.host}`)
  }
  return [...origins].sort()
}

// Run from the sources (the tests), the folder holds the page's sources but no bundled script:
// esbuild (a development dependency) bundles it, once per folder and process.
const bundled = new Map<string, Promise<Buffer>>()
async function script (folder: string): Promise<Buffer> {
  const file = join(folder, 'board.js')
  if (existsSync(file)) return await readFile(file)
  let text = bundled.get(folder)
  if (text === undefined) {
    const { bundleBoard } = await import(pathToFileURL(join(folder, 'bundle.mjs')).href) as { bundleBoard: () => Promise<string> }
    text = bundleBoard().then((js) => Buffer.from(js))
    bundled.set(folder, text)
  }
  return await text
}

/**
 * The board page (docs/board-page.md): `/` and `/board` serve it, its script, style sheet and icon
 * are under `/board-assets/` (the icon also as `/favicon.ico`). Everything is read once at start-up
 * and served with an ETag (a reload that changed nothing is a 304); the page uses only the API.
 */
const boardPage: FastifyPluginAsync<BoardPageOptions> = async (fastify, opts) => {
  const folder = opts.files ?? fileURLToPath(new URL('../board/', import.meta.url))
  const contents = new Map<PageFile, Buffer>()
  for (const name of BOARD_PAGE_FILES) contents.set(name, name === 'board.js' ? await script(folder) : await readFile(join(folder, name)))
  const send = (name: PageFile) => async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]
    // Under a prefix without its slash (`/api`), the page's relative links would miss: add it.
    if (name === 'index.html' && !path.endsWith('/') && !path.endsWith('/board')) {
      return await reply.redirect(`${path.slice(path.lastIndexOf('/') + 1)}/`, 301)
    }
    return await reply.header('content-type', TYPES[name]).header('cache-control', 'no-cache')
      .header('content-security-policy', name === 'index.html' ? await pagePolicy(request) : POLICY)
      .header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('x-frame-options', 'DENY')
      .send(contents.get(name))
  }
  const pagePolicy = async (request: FastifyRequest): Promise<string> => {
    if (!fastify.hasDecorator('planningStore')) return POLICY
    try {
      return policy(avatarOrigins(await fastify.planningStore.connections.list()))
    } catch (err) {
      request.log.warn({ err }, 'the board page shows initials only: the connections could not be read')
      return POLICY
    }
  }
  const schema = { tags: ['board page'], hide: true }
  fastify.get('/', { schema }, send('index.html'))
  fastify.get('/board', { schema }, send('index.html'))
  fastify.get('/board-assets/board.css', { schema }, send('board.css'))
  fastify.get('/board-assets/board.js', { schema }, send('board.js'))
  fastify.get('/board-assets/icon.svg', { schema }, send('icon.svg'))
  fastify.get('/favicon.ico', { schema }, send('icon.svg'))
}

export default fp(boardPage, { name: 'planning-board-page', fastify: '5.x' })
