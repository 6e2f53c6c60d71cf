import type { App, TOKENS } from './helper.js'

/** A GraphQL answer as the tests read it. */
export type Gql = { data: any, errors?: Array<{ message: string, extensions: { code: string } }> }

/** Posts a document as `login`; anything but HTTP 200 throws with the answer. */
export async function gql (app: App, login: keyof typeof TOKENS, query: string, variables?: Record<string, unknown>, url = '/public/graphql'): Promise<Gql> {
  const res = await app.as(login, { method: 'POST', url, payload: { query, variables } })
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
  return res.json()
}
