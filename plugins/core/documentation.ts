import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

export interface DocumentationOptions {
  /** serve Swagger UI at /documentation besides the JSON document (default true) */
  ui?: boolean
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
          token: { type: 'apiKey', in: 'header', name: 'X-Authentication-Token' },
          access_token: { type: 'apiKey', in: 'query', name: 'access_token' }
        }
      },
      security: [{ token: [] }, { access_token: [] }]
    }
  })
  if (opts.ui !== false) {
    await fastify.register(swaggerUi, { routePrefix: '/documentation' })
  } else {
    fastify.get('/documentation/json', { schema: { hide: true } }, async () => fastify.swagger())
  }
}, { name: 'planning-documentation', fastify: '5.x' })
