import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface BoardPageOptions {
  /** the folder holding the page's files (the single executable unpacks its own); default: the package's `board/` */
  files?: string
}

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'board.css': 'text/css; charset=utf-8',
  'board.js': 'text/javascript; charset=utf-8'
} as const

// The page talks to this server only; nothing else may be loaded or framed.
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * The board page (README, "The board page"): `/` and `/board` serve it, its script and style sheet
 * are under `/board-assets/`. Everything is read once at start-up and served with an ETag (a
 * reload that changed nothing is a 304); the page itself uses only the public API.
 */
const boardPage: FastifyPluginAsync<BoardPageOptions> = async (fastify, opts) => {
  const folder = opts.files ?? fileURLToPath(new URL('../board/', import.meta.url))
  const contents = new Map<string, Buffer>()
  for (const name of Object.keys(FILES)) contents.set(name, await readFile(join(folder, name)))
  const send = (name: keyof typeof FILES) => async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]
    // Under a prefix without its slash (`/api`), the page's relative links would miss: add it.
    if (name === 'index.html' && !path.endsWith('/') && !path.endsWith('/board')) {
      return await reply.redirect(`${path.slice(path.lastIndexOf('/') + 1)}/`, 301)
    }
    return await reply.header('content-type', FILES[name]).header('cache-control', 'no-cache').header('content-security-policy', POLICY)
      .header('x-content-type-options', 'nosniff').send(contents.get(name))
  }
  const schema = { tags: ['board page'], hide: true }
  fastify.get('/', { schema }, send('index.html'))
  fastify.get('/board', { schema }, send('index.html'))
  fastify.get('/board-assets/board.css', { schema }, send('board.css'))
  fastify.get('/board-assets/board.js', { schema }, send('board.js'))
}

export default fp(boardPage, { name: 'planning-board-page', fastify: '5.x' })
