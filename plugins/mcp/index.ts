import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { DomainError } from '../../db/errors.js'
import { isDatabaseUnavailable } from '../../db/engine/engine.js'
import { TOOLS, type Tool, type ToolContext } from './tools.js'

export interface McpPluginOptions {
  /** the time sprint reports go by, in epoch ms (default Date.now) */
  now?: () => number
}

const VERSION = '1.0.0'

/** The MCP SDK (with zod), imported at the first MCP request, not when the server starts. */
async function loadSdk () {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js')
  ])
  return { Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema }
}
let sdk: ReturnType<typeof loadSdk> | undefined

/** A tool's answer: the result as text (for any client) and as structured content. */
const answer = (result: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(result) }],
  structuredContent: result
})
const refusal = (message: string): CallToolResult => ({ content: [{ type: 'text', text: message }], isError: true })

/** Why the arguments do not fit the tool's input schema, naming the first misfit; undefined when they fit. */
function misfit (check: TypeCheck<TObject>, args: unknown): string | undefined {
  if (check.Check(args)) return undefined
  const first = check.Errors(args).First()
  const where = first === undefined || first.path === '' ? 'the arguments' : `argument ${first.path.slice(1).replaceAll('/', '.')}`
  return `${where}: ${first?.message.toLowerCase() ?? 'do not match the tool\'s input schema'}`
}

/**
 * The MCP endpoint (docs/mcp.md): `POST /mcp` speaks the Streamable HTTP transport of the MCP SDK,
 * stateless (any instance answers any request), JSON answers. The caller's token or session signs
 * each request in, as for REST; a tool that writes refuses a read-scoped token.
 */
const mcp: FastifyPluginAsync<McpPluginOptions> = async (fastify, opts) => {
  const now = opts.now ?? Date.now
  const checks = new Map<string, { tool: Tool, check: TypeCheck<TObject> }>(TOOLS.map((tool) => [tool.name, { tool, check: TypeCompiler.Compile(tool.input) }]))
  const listing = TOOLS.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input as { type: 'object' }, annotations: { readOnlyHint: !tool.writes } }))

  const call = async (ctx: ToolContext, name: string, args: unknown): Promise<CallToolResult> => {
    const found = checks.get(name)
    if (found === undefined) return refusal(`there is no tool ${JSON.stringify(name.slice(0, 100))}; tools/list names them`)
    const { tool, check } = found
    const given = args ?? {}
    const wrong = misfit(check, given)
    if (wrong !== undefined) return refusal(`${tool.name}: ${wrong}`)
    if (tool.writes) {
      const refused = fastify.planningAuth.changeRefusal(ctx.request)
      if (refused !== undefined) return refusal(`${tool.name}: ${refused.message}`)
    }
    try {
      return answer(await tool.run(ctx, given as never))
    } catch (err) {
      const status = (err as { statusCode?: unknown }).statusCode
      if (err instanceof DomainError || (typeof status === 'number' && status >= 400 && status < 500)) return refusal(`${tool.name}: ${(err as Error).message}`)
      if (isDatabaseUnavailable(err)) return refusal(`${tool.name}: the database is unavailable; retry in a few seconds`)
      ctx.request.log.error({ err }, 'MCP tool failed')
      return refusal(`${tool.name}: internal error (request ${ctx.request.id}); see the server log`)
    }
  }

  const serverFor = async (ctx: ToolContext): Promise<Server> => {
    const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await (sdk ??= loadSdk())
    const server = new Server({ name: 'planning-api-server', version: VERSION }, {
      capabilities: { tools: {} },
      instructions: 'Plan work on this server\'s boards: list_workspaces first, then read with get_board, search_issues and get_issue; change with move_issue, set_estimate, create_issue, close_issue and add_dependency.'
    })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }))
    server.setRequestHandler(CallToolRequestSchema, async (req) => await call(ctx, req.params.name, req.params.arguments))
    return server
  }

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const server = await serverFor({ fastify: fastify as FastifyInstance, request, now })
    const { WebStandardStreamableHTTPServerTransport } = await (sdk ??= loadSdk())
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers.set(name, value)
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
      }
      const web = new Request(`http://mcp.invalid${request.url.split('?')[0]}`, { method: request.method, headers })
      const response = await transport.handleRequest(web, { parsedBody: request.body })
      reply.status(response.status)
      response.headers.forEach((value, name) => { reply.header(name, value) })
      const text = await response.text()
      return await reply.send(text === '' ? undefined : text)
    } finally {
      await server.close()
    }
  }

  fastify.addHook('onRequest', fastify.planningAuth.requireSignedIn)
  const schema = { tags: ['mcp'], summary: 'MCP endpoint (Streamable HTTP transport, stateless, JSON answers)' }
  fastify.post('/mcp', { schema }, handle)
  // Stateless: no stream of server-sent messages to open (GET) and no session to end (DELETE).
  const notOffered = async (_request: FastifyRequest, reply: FastifyReply) => await reply.status(405).header('allow', 'POST').send({
    jsonrpc: '2.0', id: null, error: { code: -32000, message: 'this MCP endpoint is stateless: POST every message; no stream or session to open or end' }
  })
  fastify.get('/mcp', { schema: { ...schema, summary: 'MCP stream: not offered (405); every answer comes with its POST' } }, notOffered)
  fastify.delete('/mcp', { schema: { ...schema, summary: 'MCP session end: not offered (405); the endpoint keeps no session' } }, notOffered)
}

export default fp(mcp, { name: 'planning-mcp', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
