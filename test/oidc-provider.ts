import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

export const CLIENT = { id: 'planning', secret: 'planning-client-secret-0123456789' }
export const PUBLIC_URL = 'http://planning.test'

/** People the test provider knows: any login signs in; these get claims. */
export const PEOPLE: Record<string, { email?: string, email_verified?: boolean, preferred_username?: string }> = {
  alice: { email: 'alice@example.com', email_verified: true, preferred_username: 'alice' },
  newcomer: { email: 'newcomer@example.com', email_verified: true, preferred_username: 'new comer' },
  unverified: { email: 'alice@example.com', email_verified: false, preferred_username: 'mallory' },
  // Another subject with alice's address in other case, and one with exactly hers.
  'alice-case': { email: 'Alice@Example.com', email_verified: true, preferred_username: 'alice-case' },
  'alice-twin': { email: 'alice@example.com', email_verified: true, preferred_username: 'alice-twin' }
}

/**
 * `oidc-provider` on 127.0.0.1 behind a small proxy (the issuer is the proxy's address), so a
 * test can tamper with the ID token the token endpoint returns.
 */
export async function startProvider (): Promise<{ issuer: string, tamper: (on: boolean) => void, close: () => Promise<void> }> {
  const proxy = createServer()
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT.id, client_secret: CLIENT.secret, redirect_uris: [`${PUBLIC_URL}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['test-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: true } },
    async findAccount (_ctx, sub) {
      return { accountId: sub, async claims () { return { sub, ...PEOPLE[sub] } } }
    }
  })
  const inner: Server = createServer(provider.callback())
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve))
  const innerPort = (inner.address() as AddressInfo).port
  let tampering = false
  proxy.on('request', (req, res) => {
    const forward = httpRequest({ host: '127.0.0.1', port: innerPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (!(tampering && req.url?.startsWith('/token') === true)) {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
        return
      }
      const chunks: Buffer[] = []
      answer.on('data', (c: Buffer) => chunks.push(c))
      answer.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { id_token: string }
        const [header, payload, signature] = body.id_token.split('.')
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>
        claims.sub = 'someone-else'
        body.id_token = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.')
        const text = JSON.stringify(body)
        res.writeHead(answer.statusCode ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
        res.end(text)
      })
    })
    req.pipe(forward)
  })
  return {
    issuer,
    tamper: (on) => { tampering = on },
    close: async () => {
      proxy.closeAllConnections()
      inner.closeAllConnections()
      await Promise.all([new Promise((resolve) => proxy.close(resolve)), new Promise((resolve) => inner.close(resolve))])
    }
  }
}

/** A browser's cookie jar for the provider's pages (paths and expiry ignored: one short test). */
export class Browser {
  private readonly cookies = new Map<string, string>()

  async get (url: string, form?: Record<string, string>): Promise<Response> {
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      body: form === undefined ? undefined : new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(5000)
    })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1))
    }
    return response
  }

  /**
   * Signs in at the provider from its authorization URL: the login form (any password), then the
   * consent form; returns the redirect back to the server (its callback URL).
   */
  async signIn (authorizationUrl: string, login: string): Promise<string> {
    let url = authorizationUrl
    for (let step = 0; step < 12; step++) {
      const response = await this.get(url)
      const location = response.headers.get('location')
      if (location !== null) {
        url = new URL(location, url).href
        if (url.startsWith(PUBLIC_URL)) return url
        continue
      }
      const html = await response.text()
      const action = /action="([^"]+)"/.exec(html)?.[1]
      if (action === undefined) throw new Error(`no form on the provider's page (${response.status})`)
      const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1]
      const posted = await this.get(new URL(action.replaceAll('&amp;', '&'), url).href, prompt === 'login' ? { prompt, login, password: 'any' } : { prompt: prompt ?? 'consent' })
      const next = posted.headers.get('location')
      if (next === null) throw new Error(`the provider's form answered ${posted.status}`)
      url = new URL(next, url).href
      if (url.startsWith(PUBLIC_URL)) return url
    }
    throw new Error('the provider never sent the browser back')
  }
}
