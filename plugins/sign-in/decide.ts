import type { User } from '../../db/users.js'

export type SignupMode = 'closed' | 'open' | 'host'

export type SignInDecision =
  | { kind: 'linked', user: User }
  | { kind: 'link-by-email', user: User }
  | { kind: 'create', invited?: true }
  | { kind: 'refuse', reason: string }

/**
 * Who a sign-in becomes (docs/sign-in.md, "Who gets in"): the user linked to the identity; else,
 * with OIDC_LINK_BY_EMAIL, the user holding the identity's verified email; else a new user when the
 * sign-in started on the page of an open invite (the invite is the permission to join), when
 * SIGNUP is open, or when it is host and the identity (of an issue host) is a collaborator of a
 * connected repository; else nobody.
 */
export function decideSignIn (input: {
  linked: User | undefined
  byEmail: User | undefined
  emailVerified: boolean
  linkByEmail: boolean
  signup: SignupMode
  /** an issue host's identity holding a permission on one of the connection's repositories (undefined: not a host sign-in) */
  hostCollaborator?: boolean
  /** the sign-in started on an invite's page and that invite is still unused and unexpired */
  invited?: boolean
}): SignInDecision {
  if (input.linked !== undefined) return { kind: 'linked', user: input.linked }
  if (input.linkByEmail && input.emailVerified && input.byEmail !== undefined) return { kind: 'link-by-email', user: input.byEmail }
  if (input.invited === true) return { kind: 'create', invited: true }
  if (input.signup === 'open') return { kind: 'create' }
  if (input.signup === 'host' && input.hostCollaborator === true) return { kind: 'create' }
  if (input.signup === 'host' && input.hostCollaborator === false) {
    return { kind: 'refuse', reason: 'you are not a collaborator of a repository connected to this server, and no account here is linked to you' }
  }
  return { kind: 'refuse', reason: 'no account on this server is linked to this identity; ask an administrator to add you' }
}

/** A login for a new user from the provider's suggestion: the allowed characters only, never empty. */
export function loginFrom (hint: string | undefined): string {
  const cleaned = (hint ?? '').replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 39)
  return cleaned === '' ? 'user' : cleaned
}
