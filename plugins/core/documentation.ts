import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface DocumentationOptions {
  /** serve Swagger UI at /documentation besides the JSON document (default true) */
  ui?: boolean
  /** where Swagger UI's static files are (the single executable unpacks its own); default: the package's */
  uiFiles?: string
}

/** OpenAPI document generated from the route schemas, at /documentation/json, with Swagger UI. */
export default fp<DocumentationOptions>(async (fastify, opts) => {
  await fastify.register(swagger, {
    openapi: {
      info: {
        title: 'Planning API',
        description: 'Self-hosted legacy planning REST API (p1/p2), its webhook configuration, the admin API and the chat companion API.',
        version: '1.0.0'
      },
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Authentication-Token',
            description: 'A user\'s API token: logged for the demo user on the first start, or made with POST /admin/users/{login}/token (npm run admin -- token <login>)'
          },
          access_token: { type: 'apiKey', in: 'query', name: 'access_token', description: 'The same token as a query parameter' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The same token as Authorization: Bearer <token> (chat API)' },
          admin: { type: 'http', scheme: 'bearer', description: 'The admin API: Authorization: Bearer <ADMIN_TOKEN> (the server\'s configuration)' }
        }
      },
      security: [{ token: [] }, { access_token: [] }, { bearer: [] }],
      tags: [
        { name: 'issues', description: 'Issue data, events and estimates (p1)' },
        { name: 'boards', description: 'Workspaces, boards and moves (p1 and p2)' },
        { name: 'epics', description: 'Epics (p1)' },
        { name: 'milestones', description: 'Milestone start dates (p1)' },
        { name: 'dependencies', description: 'Blocking dependencies (p1)' },
        { name: 'release reports', description: 'Release reports (p1)' },
        { name: 'webhooks', description: 'Outgoing webhooks of a repository (repository admins)' },
        { name: 'extensions', description: 'Beyond the hosted API: opt-in paths and parameters' },
        { name: 'chat', description: 'The chat companion API: messages, commands, moderation, live feed' },
        { name: 'integrations', description: 'Webhooks from issue hosts (GitHub, Gitea, Forgejo): signed, no user token' },
        { name: 'operations', description: 'Health and readiness probes: no token' },
        { name: 'admin', description: 'The admin API: needs ADMIN_TOKEN as a Bearer token' }
      ]
    },
    // The admin routes take the admin token, the probes and issue-host webhooks none.
    transform: ({ schema, url }) => {
      const tags = (schema as { tags?: string[] } | undefined)?.tags ?? []
      const security = tags.includes('admin') ? [{ admin: [] }] : tags.includes('operations') || tags.includes('integrations') ? [] : undefined
      return { schema: security === undefined ? schema : { ...schema, security } as typeof schema, url }
    }
  })
  if (opts.ui !== false) {
    // indexPrefix: the page's asset links carry the prefix this API is mounted under (BASE_PATH or
    // a host app's), so /api/documentation loads /api/documentation/static/….
    await fastify.register(swaggerUi, {
      routePrefix: '/documentation',
      indexPrefix: fastify.prefix,
      // Swagger UI reads its logo beside its own code; from a folder of our own, it comes from there.
      ...(opts.uiFiles === undefined ? {} : { baseDir: opts.uiFiles, logo: { type: 'image/svg+xml', content: await readFile(join(opts.uiFiles, 'logo.svg')) } })
    })
  } else {
    fastify.get('/documentation/json', { schema: { hide: true } }, async () => fastify.swagger())
  }
}, { name: 'planning-documentation', fastify: '5.x' })
