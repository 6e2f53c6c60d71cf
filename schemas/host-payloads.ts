import { Type, type Static } from './common.js'

/**
 * The fields of an issue host's webhook payloads (GitHub's, and Gitea's and Forgejo's compatible
 * ones) that this server reads, checked before anything touches the store. Everything else in a
 * payload is ignored, so the objects stay open.
 */

const PlatformId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
/** Logins as the hosts allow them, bots included (`dependabot[bot]`). */
const HostLogin = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*(\\[bot\\])?$' })
const RepoName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' })
const WebUrl = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s<>"]+$' })
const HostTime = Type.String({ format: 'date-time', maxLength: 40 })
const Title = Type.String({ maxLength: 1024 })

export const HostUser = Type.Object({
  id: PlatformId,
  login: Type.Optional(HostLogin),
  username: Type.Optional(HostLogin)
})

export const HostRepositoryPayload = Type.Object({
  id: PlatformId,
  name: RepoName,
  full_name: Type.Optional(Type.String({ maxLength: 201 })),
  owner: Type.Object({
    login: Type.Optional(HostLogin),
    username: Type.Optional(HostLogin),
    id: Type.Optional(PlatformId),
    type: Type.Optional(Type.String({ maxLength: 40 }))
  }),
  html_url: WebUrl,
  updated_at: Type.Optional(Type.Union([HostTime, Type.Null()])),
  // GitHub's push events give seconds since 1970, every other payload a time
  created_at: Type.Optional(Type.Union([HostTime, Type.Integer({ minimum: 0, maximum: 1e11 }), Type.Null()])),
  private: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean())
})

export const HostLabel = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  color: Type.Optional(Type.Union([Type.String({ pattern: '^#?[0-9A-Fa-f]{6}$' }), Type.Null()]))
})
const HostAssignee = Type.Object({
  login: Type.Optional(HostLogin),
  username: Type.Optional(HostLogin),
  avatar_url: Type.Optional(Type.Union([WebUrl, Type.Literal(''), Type.Null()]))
})

export const HostIssuePayload = Type.Object({
  number: PlatformId,
  title: Title,
  state: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  updated_at: HostTime,
  labels: Type.Optional(Type.Union([Type.Array(HostLabel, { maxItems: 100 }), Type.Null()])),
  assignees: Type.Optional(Type.Union([Type.Array(HostAssignee, { maxItems: 100 }), Type.Null()])),
  milestone: Type.Optional(Type.Union([Type.Object({ number: PlatformId }), Type.Null()])),
  /** GitHub's and Gitea's issue listings carry pull requests too, marked by this object */
  pull_request: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
  /** the description (Markdown); a longer one than BODY_LIMIT is cut, not refused (db/issue-host/host-sync.ts) */
  body: Type.Optional(Type.Union([Type.String(), Type.Null()]))
})

export const HostMilestonePayload = Type.Object({
  number: PlatformId,
  title: Title,
  updated_at: Type.Optional(Type.Union([HostTime, Type.Null()])),
  due_on: Type.Optional(Type.Union([HostTime, Type.Null()])),
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')]))
})

export const InstallationRepository = Type.Object({
  id: PlatformId,
  full_name: Type.String({ maxLength: 201, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$' })
})

/** `issues` and `pull_request`: the item carries the `updated_at` that orders deliveries. */
export const IssueEvent = Type.Object({
  action: Type.String({ maxLength: 50 }),
  repository: HostRepositoryPayload,
  label: Type.Optional(HostLabel),
  sender: Type.Optional(HostUser),
  milestone: Type.Optional(Type.Union([HostMilestonePayload, Type.Null()]))
})
export const MilestoneEvent = Type.Object({
  action: Type.String({ maxLength: 50 }),
  repository: HostRepositoryPayload,
  milestone: Type.Intersect([HostMilestonePayload, Type.Object({ updated_at: HostTime })])
})
export const RepositoryEvent = Type.Object({
  action: Type.String({ maxLength: 50 }),
  repository: Type.Intersect([HostRepositoryPayload, Type.Object({ updated_at: HostTime })])
})
export const MemberEvent = Type.Object({
  action: Type.String({ maxLength: 50 }),
  repository: HostRepositoryPayload
})
export const InstallationRepositoriesEvent = Type.Object({
  action: Type.String({ maxLength: 50 }),
  repositories_added: Type.Optional(Type.Array(InstallationRepository, { maxItems: 1000 })),
  repositories_removed: Type.Optional(Type.Array(InstallationRepository, { maxItems: 1000 }))
})

export type HostUser = Static<typeof HostUser>
export type HostRepositoryPayload = Static<typeof HostRepositoryPayload>
export type HostIssuePayload = Static<typeof HostIssuePayload>
export type HostMilestonePayload = Static<typeof HostMilestonePayload>
