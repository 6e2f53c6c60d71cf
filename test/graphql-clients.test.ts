import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { buildSchema, parse, validate } from 'graphql'

/**
 * The documents real clients send, validated against our schema. The clients' own files are not
 * kept in this repository: GRAPHQL_CLIENT_DOCS names a folder holding one folder per client
 * (`zenhub-mcp/`, `dependency-graph/`) of `.graphql` files taken from their public sources
 * (docs/graphql.md, "Clients"). Those listed in `expected` must stay valid; the others are reported.
 */
const schema = buildSchema(readFileSync(new URL('../plugins/graphql/schema/schema.graphql', import.meta.url), 'utf8'))
const given = process.env.GRAPHQL_CLIENT_DOCS
const dir = given === undefined || given === '' ? undefined : pathToFileURL(`${given.replace(/\/+$/, '')}/`)

export function check (client: string, root: URL): { valid: string[], invalid: Array<{ name: string, errors: string[] }> } {
  const folder = new URL(`${client}/`, root)
  const names = readdirSync(folder).filter((f) => f.endsWith('.graphql')).sort()
  const out = { valid: [] as string[], invalid: [] as Array<{ name: string, errors: string[] }> }
  for (const name of names) {
    const errors = validate(schema, parse(readFileSync(new URL(name, folder), 'utf8'))).map((e) => e.message)
    if (errors.length === 0) out.valid.push(name.replace(/\.graphql$/, ''))
    else out.invalid.push({ name: name.replace(/\.graphql$/, ''), errors })
  }
  return out
}

const expected: Record<string, string[]> = {
  'dependency-graph': ['DeleteIssueDependency', 'GetAllOrganizations', 'GetIssueByNumber', 'GetRepoAndPipelines', 'GetSimpleIssueByNumber', 'GetWorkSpace'],
  'zenhub-mcp': [
    'dependencies__mutations__createIssueDependency', 'dependencies__mutations__deleteIssueDependency',
    'issues__queries__moveIssue', 'issues__queries__setEstimate',
    'pipelines__queries__getWorkspacePipelines', 'queries__queries__issueByInfo', 'queries__queries__searchIssuesByPipeline', 'queries__queries__viewer',
    'sprints__queries__getWorkspaceSprints', 'workspaces__queries__getOrganizationWorkspaces', 'workspaces__queries__getUserOrganizations',
    'workspaces__queries__getUserWorkspacesFromOrgs', 'workspaces__queries__searchUserWorkspaces'
  ]
}

for (const [client, valid] of Object.entries(expected)) {
  const skip = dir === undefined
    ? 'GRAPHQL_CLIENT_DOCS is not set (a folder of the clients\' documents; docs/graphql.md, "Clients")'
    : existsSync(new URL(`${client}/`, dir)) ? false : `GRAPHQL_CLIENT_DOCS holds no ${client}/ folder`
  t.test(`${client}: its documents validate against our schema`, { skip }, async (t) => {
    const result = check(client, dir!)
    for (const name of valid) t.ok(result.valid.includes(name), `${name} validates`)
    for (const { name, errors } of result.invalid) t.comment(`not yet: ${name}: ${errors[0]}`)
    t.comment(`${client}: ${result.valid.length} of ${result.valid.length + result.invalid.length} documents validate`)
  })
}
