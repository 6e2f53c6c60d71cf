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
  'dependency-graph': [
    'CreateBlockage', 'DeleteIssueDependency', 'GetAllEpics', 'GetAllOrganizations', 'GetEpicChildIssues', 'GetIssueByNumber', 'GetRepoAndPipelines',
    'GetSimpleIssueByNumber', 'GetWorkSpace'
  ],
  'zenhub-mcp': [
    'dependencies__mutations__createIssueDependency', 'dependencies__mutations__deleteIssueDependency', 'epics__mutations__addIssuesToEpics',
    'epics__mutations__addSubIssues', 'epics__mutations__createEpic', 'epics__mutations__createEpicFromIssue', 'epics__mutations__createZenhubEpic',
    'epics__mutations__deleteZenhubEpic', 'epics__mutations__removeIssuesFromEpics', 'epics__mutations__updateZenhubEpic',
    'epics__mutations__updateZenhubEpicDates', 'epics__queries__getEpic', 'issues__mutations__addAssigneesToIssues',
    'issues__mutations__addLabelsToIssues', 'issues__mutations__createIssue', 'issues__mutations__removeAssigneesFromIssues',
    'issues__mutations__removeLabelsFromIssues', 'issues__mutations__updateIssue', 'issues__queries__closeIssues', 'issues__queries__moveIssue',
    'issues__queries__reopenIssues', 'issues__queries__setEstimate', 'labels__mutations__createGithubLabel', 'labels__mutations__createZenhubLabel',
    'labels__mutations__deleteZenhubLabels', 'labels__queries__getRepositoryLabels', 'labels__queries__getWorkspaceLabels',
    'milestones__mutations__addMilestoneToIssues', 'milestones__mutations__createMilestone', 'milestones__mutations__deleteMilestone',
    'milestones__mutations__removeMilestoneToIssues', 'milestones__mutations__updateMilestone', 'pipelines__mutations__createPipeline',
    'pipelines__mutations__deletePipeline', 'pipelines__mutations__updatePipeline', 'pipelines__queries__getWorkspacePipelines',
    'queries__queries__getRepositoriesByGhIds', 'queries__queries__issueByInfo', 'queries__queries__searchIssues',
    'queries__queries__searchIssuesByPipeline', 'queries__queries__viewer', 'queries__queries__workspaceIssues',
    'repositories__mutations__addRepositoryToWorkspace', 'repositories__mutations__disconnectWorkspaceRepository',
    'repositories__queries__getRepositoryAssignableUsers', 'repositories__queries__getRepositoryDetails',
    'repositories__queries__getWorkspaceRepositories', 'sprints__mutations__addIssuesToSprints', 'sprints__mutations__createSprintConfig',
    'sprints__mutations__deleteSprintConfigAndOpenSprints', 'sprints__mutations__removeIssuesFromSprints', 'sprints__mutations__updateSprint',
    'sprints__queries__getWorkspaceSprints', 'users__queries__getWorkspaceUsers', 'users__queries__ownerByGhId', 'users__queries__ownerByLogin',
    'users__queries__searchOwnerByLogin', 'users__queries__searchWorkspaceUsers', 'workspaces__mutations__createWorkspace',
    'workspaces__queries__getOrganizationWorkspaces', 'workspaces__queries__getUserOrganizations', 'workspaces__queries__getUserWorkspacesFromOrgs',
    'workspaces__queries__getWorkspaceOverview', 'workspaces__queries__searchUserWorkspaces'
  ],
  // zh's documents: its Go sources' query, mutation and fragment literals (not its tests', nor those sent to GitHub's own API), as <file>__<operation>
  zh: [
    'cmd_activity_go__ActivityClosed', 'cmd_activity_go__ActivityDefaultPRPipeline', 'cmd_activity_go__ActivityIssueByInfo',
    'cmd_activity_go__ActivitySearch', 'cmd_activity_go__IssueConnectedPRs', 'cmd_activity_go__PRConnections', 'cmd_board_go__GetBoard',
    'cmd_board_go__SearchClosedIssues', 'cmd_epic_assignee_label_go__AddAssigneesToZenhubEpics',
    'cmd_epic_assignee_label_go__AddZenhubLabelsToZenhubEpics', 'cmd_epic_assignee_label_go__RemoveAssigneesFromZenhubEpics',
    'cmd_epic_assignee_label_go__RemoveZenhubLabelsFromZenhubEpics', 'cmd_epic_go__GetLegacyEpic', 'cmd_epic_go__GetLegacyEpicProgress',
    'cmd_epic_go__GetZenhubEpic', 'cmd_epic_go__GetZenhubEpicProgress', 'cmd_epic_go__ListLegacyEpicsFull', 'cmd_epic_go__ListZenhubEpicsFull',
    'cmd_epic_key_date_go__CreateZenhubEpicKeyDate', 'cmd_epic_key_date_go__DeleteZenhubEpicKeyDate', 'cmd_epic_key_date_go__GetEpicKeyDates',
    'cmd_epic_mutations_go__AddIssuesToZenhubEpics', 'cmd_epic_mutations_go__CreateEpic', 'cmd_epic_mutations_go__CreateZenhubEpic',
    'cmd_epic_mutations_go__DeleteZenhubEpic', 'cmd_epic_mutations_go__GetEpicChildCount', 'cmd_epic_mutations_go__GetEpicChildIssueIDs',
    'cmd_epic_mutations_go__GetIssueForEpic', 'cmd_epic_mutations_go__GetWorkspaceOrg', 'cmd_epic_mutations_go__GetZenhubEpicEstimate',
    'cmd_epic_mutations_go__RemoveIssuesFromZenhubEpics', 'cmd_epic_mutations_go__SetEstimateOnZenhubEpics',
    'cmd_epic_mutations_go__UpdateEpicDates', 'cmd_epic_mutations_go__UpdateIssue', 'cmd_epic_mutations_go__UpdateZenhubEpic',
    'cmd_epic_mutations_go__UpdateZenhubEpicDates', 'cmd_epic_mutations_go__UpdateZenhubEpicState', 'cmd_issue_activity_go__GetIssueTimeline',
    'cmd_issue_block_go__CreateBlockage', 'cmd_issue_close_go__CloseIssues', 'cmd_issue_close_go__GetIssueForClose',
    'cmd_issue_connect_go__CreateIssuePrConnection', 'cmd_issue_connect_go__DeleteIssuePrConnection', 'cmd_issue_connect_go__GetIssueForConnect',
    'cmd_issue_connect_go__GetIssueForConnectByNode', 'cmd_issue_estimate_go__GetIssueForEstimate',
    'cmd_issue_estimate_go__GetIssueForEstimateByNode', 'cmd_issue_estimate_go__SetEstimate', 'cmd_issue_go__GetIssueByNode',
    'cmd_issue_go__GetIssueDetails', 'cmd_issue_go__ListClosedIssues', 'cmd_issue_go__ListIssuesByEpic', 'cmd_issue_go__ListIssuesByPipeline',
    'cmd_issue_label_go__AddLabelsToIssues', 'cmd_issue_label_go__GetIssueForLabel', 'cmd_issue_label_go__RemoveLabelsFromIssues',
    'cmd_issue_move_go__GetPipelineIssueId', 'cmd_issue_move_go__MoveIssue', 'cmd_issue_move_go__MovePipelineIssues',
    'cmd_issue_priority_go__GetIssueForPriority', 'cmd_issue_priority_go__RemoveIssuePriority', 'cmd_issue_priority_go__SetIssuePriority',
    'cmd_issue_reopen_go__ReopenIssues', 'cmd_pipeline_go__GetPipelineIssues', 'cmd_pipeline_go__ListPipelinesFull',
    'cmd_pipeline_go__PipelineAutomations', 'cmd_pipeline_mutations_go__CreatePipeline', 'cmd_pipeline_mutations_go__DeletePipeline',
    'cmd_pipeline_mutations_go__UpdatePipeline', 'cmd_sprint_go__GetSprint', 'cmd_sprint_go__GetSprintIssues', 'cmd_sprint_go__ListSprints',
    'cmd_sprint_mutations_go__AddIssuesToSprints', 'cmd_sprint_mutations_go__RemoveIssuesFromSprints', 'cmd_sprint_reports_go__SprintReview',
    'cmd_sprint_reports_go__SprintScopeChange', 'cmd_sprint_reports_go__SprintVelocity', 'cmd_timeline_go__GetIssueTimelineByNode',
    'cmd_workspace_go__FavoriteWorkspaces', 'cmd_workspace_go__GetWorkspace', 'cmd_workspace_go__ListWorkspaces',
    'cmd_workspace_go__RecentWorkspaces', 'cmd_workspace_go__WorkspaceRepos', 'cmd_workspace_repo_mutations_go__AddRepositoryToWorkspace',
    'cmd_workspace_repo_mutations_go__DisconnectWorkspaceRepository', 'internal_resolve_epic_go__ListLegacyEpics',
    'internal_resolve_epic_go__ListZenhubEpics', 'internal_resolve_issue_go__IssueByInfo', 'internal_resolve_issue_go__IssueByNode',
    'internal_resolve_label_go__GetWorkspaceLabels', 'internal_resolve_pipeline_go__ListPipelines',
    'internal_resolve_priority_go__GetWorkspacePriorities', 'internal_resolve_repo_go__ListRepos', 'internal_resolve_sprint_go__ListSprints',
    'internal_resolve_user_go__ListZenhubUsers', 'internal_resolve_zenhub_label_go__ListZenhubLabels'
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
