import type { DomainEvent, SprintRef } from '../db/domain-events.js'
import { issueUrl, webUrl } from '../db/repositories.js'

/**
 * The hosted API's custom webhook body for a board or estimate change: form fields, every value
 * a string (docs/api.md, "Webhooks"); `github_url` is empty for a repository with no issue host.
 */
export function webhookPayload (event: DomainEvent): Record<string, string> {
  // Events about a repository rather than an issue: the common fields, with no issue named.
  const aboutRepository = (e: { type: string, repo: DomainEvent['repo'], user: DomainEvent['user'] }) => ({
    type: e.type,
    github_url: webUrl(e.repo) ?? '',
    organization: e.repo.owner,
    repo: e.repo.name,
    user_name: e.user.login,
    issue_number: '',
    issue_title: ''
  })
  if (event.type === 'release_report_changed') {
    return {
      ...aboutRepository(event),
      release_id: event.release.id,
      release_title: event.release.title,
      release_state: event.release.state,
      change: event.change
    }
  }
  if (!('issue' in event)) return { ...aboutRepository(event), ...sprintFields(event.workspace, event.sprint) }
  const common = {
    type: event.type,
    github_url: issueUrl(event.repo, event.issue.number) ?? '',
    organization: event.repo.owner,
    repo: event.repo.name,
    user_name: event.user.login,
    issue_number: String(event.issue.number),
    issue_title: event.issue.title
  }
  switch (event.type) {
    case 'issue_transfer':
      return {
        ...common,
        to_pipeline_name: event.to,
        from_pipeline_name: event.from,
        workspace_id: event.workspace.id,
        workspace_name: event.workspace.name
      }
    case 'issue_reprioritized':
      return {
        ...common,
        to_pipeline_name: event.pipeline,
        from_position: String(event.from),
        to_position: String(event.to),
        workspace_id: event.workspace.id,
        workspace_name: event.workspace.name
      }
    case 'estimate_set':
      return { ...common, estimate: String(event.estimate) }
    case 'estimate_cleared':
    case 'issue_opened':
    case 'issue_closed':
    case 'issue_reopened':
      return common
    case 'issue_labeled':
    case 'issue_unlabeled':
      return { ...common, label: event.label }
    case 'issue_assigned':
    case 'issue_unassigned':
      return { ...common, assignee: event.assignee }
    case 'epic_issue_added':
    case 'epic_issue_removed':
      return { ...common, child_repo_id: String(event.child.repo_id), child_issue_number: String(event.child.issue_number) }
    case 'sprint_issue_added':
    case 'sprint_issue_removed':
      return { ...common, ...sprintFields(event.workspace, event.sprint), carried_over: String(event.carried) }
    case 'dependency_created':
    case 'dependency_removed':
      return {
        ...common,
        blocking_repo_id: String(event.blocking.repo_id),
        blocking_issue_number: String(event.blocking.issue_number),
        blocked_repo_id: String(event.blocked.repo_id),
        blocked_issue_number: String(event.blocked.issue_number)
      }
  }
}

function sprintFields (workspace: { id: string, name: string }, sprint: SprintRef): Record<string, string> {
  return {
    workspace_id: workspace.id,
    workspace_name: workspace.name,
    sprint_id: sprint.id,
    sprint_name: sprint.name,
    sprint_starts_at: sprint.starts_at,
    sprint_ends_at: sprint.ends_at
  }
}

export function formEncode (fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString()
}
