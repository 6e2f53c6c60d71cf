import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HostPerson { id: number, login: string }

/**
 * A fake issue host's OAuth on 127.0.0.1, shaped as GitHub (a refused code is 200 with `error`,
 * `/api/v3/user`) or as Gitea (PKCE required, a refused code is 400, `/api/v1/user` with
 * `username` too). The test plays the browser: `authorize(url)` is the person at the host's
 * consent page (`as` signs in, `deny` says no) and gives back where the host sends them. A real
 * browser can go through the consent page too, once `approveAs` names who approves at once.
 */
export async function startHostOAuth (shape: 'github' | 'gitea', client: { id: string, secret: string }) {
  const codes = new Map<string, { person: HostPerson, redirectUri: string, challenge: string | null }>()
  const tokens = new Map<string, HostPerson>()
  let approving: HostPerson | undefined
  const seen = { tokenRequests: [] as Array<Record<string, string>>, userAuthorization: [] as string[] }
  const body = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString()
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(value))
    }
    const refuse = (error: string) => json(shape === 'github' ? 200 : 400, { error, error_description: `${error} (fake host)` })
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      body(req).then((text) => {
        const form = Object.fromEntries(new URLSearchParams(text))
        seen.tokenRequests.push(form)
        if (req.headers.accept !== 'application/json') return json(406, { message: 'ask for JSON' })
        if (form.client_id !== client.id || form.client_secret !== client.secret) return refuse('incorrect_client_credentials')
        const issued = codes.get(form.code ?? '')
        codes.delete(form.code ?? '')
        if (issued === undefined) return refuse(shape === 'github' ? 'bad_verification_code' : 'invalid_grant')
        if (issued.redirectUri !== form.redirect_uri) return refuse('redirect_uri_mismatch')
        const verified = issued.challenge === null || createHash('sha256').update(form.code_verifier ?? '').digest('base64url') === issued.challenge
        if (!verified || (shape === 'gitea' && issued.challenge === null)) return refuse(shape === 'github' ? 'bad_verification_code' : 'invalid_grant')
        const token = randomBytes(16).toString('hex')
        tokens.set(token, issued.person)
        json(200, { access_token: token, token_type: 'bearer', scope: 'read:user' })
      }, () => res.destroy())
      return
    }
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize' && approving !== undefined) {
      let back: string
      try { back = authorize(`${webUrl}${req.url ?? ''}`, approving) } catch (err) { return json(400, { message: (err as Error).message }) }
      res.writeHead(302, { location: back })
      res.end()
      return
    }
    if (req.method === 'GET' && url.pathname === (shape === 'github' ? '/api/v3/user' : '/api/v1/user')) {
      seen.userAuthorization.push(req.headers.authorization ?? '')
      const person = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
      if (person === undefined) return json(401, { message: 'Bad credentials' })
      return json(200, shape === 'github'
        ? { id: person.id, login: person.login, type: 'User', email: null }
        : { id: person.id, login: person.login, username: person.login, email: `${person.login}@noreply.example`, is_admin: false })
    }
    json(404, { message: 'Not Found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const webUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  /** The person at the host's authorize page: the callback URL the host sends the browser to. */
  function authorize (location: string, as: HostPerson | 'deny'): string {
    const asked = new URL(location)
    if (asked.origin !== webUrl || asked.pathname !== '/login/oauth/authorize') throw new Error(`not the host's authorize page: ${location}`)
    const p = asked.searchParams
    if (p.get('client_id') !== client.id) throw new Error('unknown client')
    const back = new URL(p.get('redirect_uri')!)
    back.searchParams.set('state', p.get('state') ?? '')
    if (as === 'deny') {
      back.searchParams.set('error', 'access_denied')
    } else {
      const code = randomBytes(8).toString('hex')
      codes.set(code, { person: as, redirectUri: p.get('redirect_uri')!, challenge: p.get('code_challenge_method') === 'S256' ? p.get('code_challenge') : null })
      back.searchParams.set('code', code)
    }
    return back.href
  }
  return {
    webUrl,
    seen,
    authorize,
    /** The host's authorize page, opened in a browser, sends it straight back as this person. */
    approveAs (person: HostPerson) { approving = person },
    close: async () => await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
