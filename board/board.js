// The board page (README, "The board page"): plain browser JavaScript over the public API and its
// documented extensions. No framework and no build step: what is here is what the browser runs.

const TOKEN_KEY = 'planning-token'
const BOARD_KEY = 'planning-board'
const POLL_MS = 3000
const base = location.pathname.replace(/\/board\/?$/, '').replace(/\/$/, '')
const $ = (id) => document.getElementById(id)

const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  workspaces: [],
  choice: null, // { workspace, repo }
  board: null, // { pipelines: [{ id, name, issues: [...] }] }
  etag: null,
  issues: new Map(), // number -> { title, html_url }
  dragging: null, // issue number while a card is dragged
  editing: false, // an estimate being edited: like a drag, it holds newer boards back until it ends
  timer: null
}

class ApiError extends Error {}

async function api (path, options = {}) {
  const headers = { 'x-authentication-token': state.token, ...options.headers }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { ...options, headers, cache: 'no-store' })
  if (res.status >= 400) {
    let message = `${res.status} ${res.statusText}`
    try { message = (await res.json()).message ?? message } catch {}
    throw Object.assign(new ApiError(message), { status: res.status })
  }
  return res
}

function say (text, error = false) {
  $('status').textContent = text
  $('status').classList.toggle('error', error)
}

// Sign-in and the board picker

function showSignIn (message) {
  clearTimeout(state.timer)
  $('sign-in').hidden = false
  $('picker').hidden = true
  $('board').hidden = true
  $('help').hidden = true
  if (message !== undefined) say(message, true)
  $('token').focus()
}

async function signIn (token) {
  state.token = token
  try {
    const res = await api('/p2/workspaces')
    state.workspaces = await res.json()
  } catch (err) {
    state.token = null
    sessionStorage.removeItem(TOKEN_KEY)
    showSignIn(err.status === 401 ? `That token was refused: ${err.message}` : `Could not sign in: ${err.message}`)
    return
  }
  sessionStorage.setItem(TOKEN_KEY, token)
  $('sign-in').hidden = true
  showPicker()
}

function showPicker () {
  const select = $('boards')
  select.replaceChildren()
  for (const workspace of state.workspaces) {
    for (const repo of workspace.repositories) {
      const option = new Option(`${workspace.name} · repository ${repo}`, `${workspace.id}/${repo}`)
      select.append(option)
    }
  }
  $('picker').hidden = false
  if (select.options.length === 0) {
    say('This token can read no repository that is on a board.', true)
    return
  }
  const wanted = location.hash.slice(1) || sessionStorage.getItem(BOARD_KEY)
  if ([...select.options].some((o) => o.value === wanted)) select.value = wanted
  choose(select.value)
}

function choose (value) {
  const [workspace, repo] = value.split('/')
  state.choice = { workspace, repo: Number(repo) }
  state.board = null
  state.etag = null
  state.issues = new Map()
  sessionStorage.setItem(BOARD_KEY, value)
  history.replaceState(null, '', `#${value}`)
  $('board').hidden = false
  $('help').hidden = false
  refresh(true)
}

// Reading the board: conditional requests, so an unchanged board costs a 304 and nothing else

async function refresh (first = false) {
  clearTimeout(state.timer)
  const choice = state.choice
  try {
    const path = `/p2/workspaces/${choice.workspace}/repositories/${choice.repo}/board`
    const res = await api(path, { headers: state.etag === null ? {} : { 'if-none-match': state.etag } })
    if (res.status === 200 && choice === state.choice) {
      const board = await res.json()
      await learnIssues(board)
      state.board = board
      state.etag = res.headers.get('etag')
      if (state.dragging === null && !state.editing) render()
      if (first) say('')
    }
  } catch (err) {
    if (err.status === 401) return showSignIn(`Signed out: ${err.message}`)
    say(`Could not read the board: ${err.message}`, true)
  }
  state.timer = setTimeout(() => { if (!document.hidden) refresh(); else state.timer = setTimeout(refresh, POLL_MS) }, POLL_MS)
}

/** Titles and pages of issues not seen yet, 100 at a time (the bulk issue extension). */
async function learnIssues (board) {
  const missing = board.pipelines.flatMap((p) => p.issues.map((i) => i.issue_number)).filter((n) => !state.issues.has(n))
  for (let i = 0; i < missing.length; i += 100) {
    const res = await api(`/p1/repositories/${state.choice.repo}/issues?issue_numbers=${missing.slice(i, i + 100).join(',')}`)
    for (const issue of await res.json()) state.issues.set(issue.issue_number, { title: issue.title, html_url: issue.html_url })
  }
  nameRepository()
}

/** The repository's name (owner/name), read from an issue's page, in the picker and the title. */
function nameRepository () {
  const page = state.issues.values().next().value?.html_url
  if (page === undefined) return
  const name = new URL(page).pathname.replace(/\/issues\/\d+$/, '').slice(1)
  const option = $('boards').selectedOptions[0]
  const workspace = state.workspaces.find((w) => w.id === state.choice.workspace)
  if (option !== undefined && workspace !== undefined) option.textContent = `${workspace.name} · ${name}`
  document.title = `${name} · Planning board`
}

// Drawing the board

function render () {
  const focused = document.activeElement?.closest?.('.card')?.dataset.number
  const columns = state.board.pipelines.map((pipeline) => column(pipeline))
  $('board').replaceChildren(...columns)
  if (focused !== undefined) document.querySelector(`.card[data-number="${focused}"]`)?.focus()
}

function column (pipeline) {
  const section = document.createElement('section')
  section.className = 'column'
  section.dataset.pipeline = pipeline.id
  const heading = document.createElement('h3')
  const name = document.createElement('span')
  name.textContent = pipeline.name
  const counts = document.createElement('small')
  const points = pipeline.issues.reduce((sum, i) => sum + (i.estimate?.value ?? 0), 0)
  counts.textContent = `${pipeline.issues.length} ${pipeline.issues.length === 1 ? 'issue' : 'issues'} · ${pts(round(points))}`
  heading.append(name, counts)
  const list = document.createElement('ul')
  list.className = 'cards'
  list.setAttribute('aria-label', pipeline.name)
  list.append(...pipeline.issues.map((issue) => card(issue)))
  list.addEventListener('dragover', dragOver)
  list.addEventListener('dragleave', () => list.classList.remove('over'))
  list.addEventListener('drop', drop)
  section.append(heading, list)
  return section
}

const round = (n) => Math.round(n * 100) / 100
const pts = (n) => `${n} ${n === 1 ? 'pt' : 'pts'}`

function card (issue) {
  const known = state.issues.get(issue.issue_number)
  const li = document.createElement('li')
  li.className = 'card'
  li.tabIndex = 0
  li.draggable = true
  li.dataset.number = issue.issue_number
  const line = document.createElement('div')
  line.className = 'line'
  const link = document.createElement('a')
  link.textContent = `#${issue.issue_number}`
  if (known !== undefined) link.href = known.html_url
  link.target = '_blank'
  link.rel = 'noopener'
  const title = document.createElement('span')
  title.className = 'title'
  title.textContent = known?.title ?? ''
  line.append(link, title)
  const meta = document.createElement('div')
  meta.className = 'meta'
  const estimate = document.createElement('button')
  estimate.type = 'button'
  estimate.className = 'estimate'
  estimate.textContent = issue.estimate === undefined ? 'no estimate' : pts(issue.estimate.value)
  estimate.setAttribute('aria-label', `Estimate of #${issue.issue_number}: ${estimate.textContent}. Change`)
  estimate.addEventListener('click', () => editEstimate(li, issue))
  meta.append(estimate)
  if (issue.is_epic) {
    const badge = document.createElement('span')
    badge.className = 'badge'
    badge.textContent = 'Epic'
    meta.append(badge)
  }
  li.append(line, meta)
  li.setAttribute('aria-label', `#${issue.issue_number} ${known?.title ?? ''}`)
  li.addEventListener('dragstart', (event) => {
    state.dragging = issue.issue_number
    event.dataTransfer.effectAllowed = 'move'
    event.dataTransfer.setData('text/plain', String(issue.issue_number))
    li.classList.add('dragging')
  })
  li.addEventListener('dragend', () => {
    li.classList.remove('dragging')
    if (state.dragging !== null) {
      // Dropped outside a column: put everything back as it is.
      state.dragging = null
      render()
    }
  })
  li.addEventListener('keydown', (event) => keys(event, li, issue))
  return li
}

// Moving cards: drag and drop, or the keyboard; one move request each

function dragOver (event) {
  if (state.dragging === null) return
  event.preventDefault()
  const list = event.currentTarget
  list.classList.add('over')
  const dragged = document.querySelector(`.card[data-number="${state.dragging}"]`)
  const after = [...list.querySelectorAll('.card:not(.dragging)')].find((c) => {
    const box = c.getBoundingClientRect()
    return event.clientY < box.top + box.height / 2
  })
  if (after === undefined) list.append(dragged)
  else list.insertBefore(dragged, after)
}

function drop (event) {
  event.preventDefault()
  const list = event.currentTarget
  list.classList.remove('over')
  const number = state.dragging
  state.dragging = null
  if (number === null) return
  const li = list.querySelector(`.card[data-number="${number}"]`)
  const index = [...list.children].indexOf(li)
  move(number, list.closest('.column').dataset.pipeline, index)
}

function keys (event, li, issue) {
  if (event.target !== li) return
  const columns = [...document.querySelectorAll('.column')]
  const column = li.closest('.column')
  const at = columns.indexOf(column)
  const cards = [...column.querySelectorAll('.card')]
  const index = cards.indexOf(li)
  const arrows = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] }
  if (event.key === 'e' || event.key === 'E') {
    event.preventDefault()
    editEstimate(li, issue)
    return
  }
  const step = arrows[event.key]
  if (step === undefined) return
  event.preventDefault()
  const [dx, dy] = step
  const targetColumn = columns[at + dx]
  if (targetColumn === undefined) return
  const targetCards = [...targetColumn.querySelectorAll('.card')].filter((c) => c !== li)
  if (!event.shiftKey) {
    // Plain arrows move the focus.
    const next = dx === 0 ? cards[index + dy] : targetCards[Math.min(index, targetCards.length - 1)]
    next?.focus()
    return
  }
  const to = dx === 0 ? index + dy : Math.min(index, targetCards.length)
  if (to < 0 || (dx === 0 && to >= cards.length)) return
  const list = targetColumn.querySelector('.cards')
  if (to >= targetCards.length) list.append(li)
  else list.insertBefore(li, targetCards[to])
  li.focus()
  move(issue.issue_number, targetColumn.dataset.pipeline, to)
}

async function move (number, pipelineId, index) {
  const from = state.board.pipelines.find((p) => p.issues.some((i) => i.issue_number === number))
  const issue = from.issues.find((i) => i.issue_number === number)
  if (from.id === pipelineId && from.issues.indexOf(issue) === index) return
  const { workspace, repo } = state.choice
  try {
    await api(`/p2/workspaces/${workspace}/repositories/${repo}/issues/${number}/moves`, {
      method: 'POST', body: JSON.stringify({ pipeline_id: pipelineId, position: index })
    })
  } catch (err) {
    say(`Could not move #${number}: ${err.message}`, true)
    render()
    return
  }
  from.issues.splice(from.issues.indexOf(issue), 1)
  const target = state.board.pipelines.find((p) => p.id === pipelineId)
  target.issues.splice(Math.min(index, target.issues.length), 0, issue)
  say(`Moved #${number} to ${target.name}, position ${index + 1}.`)
  render()
  refresh()
}

// Estimates

function editEstimate (li, issue) {
  const button = li.querySelector('.estimate')
  const input = document.createElement('input')
  input.type = 'number'
  input.min = '0'
  input.step = 'any'
  input.value = issue.estimate?.value ?? ''
  input.setAttribute('aria-label', `Estimate of #${issue.issue_number} (empty clears it); Enter saves, Escape cancels`)
  state.editing = true
  button.replaceWith(input)
  input.focus()
  let done = false
  const finish = async (save) => {
    if (done) return
    done = true
    state.editing = false
    if (save) await saveEstimate(issue, input.value.trim())
    render()
    document.querySelector(`.card[data-number="${issue.issue_number}"]`)?.focus()
  }
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); finish(true) }
    if (event.key === 'Escape') { event.preventDefault(); finish(false) }
  })
  input.addEventListener('blur', () => finish(false))
}

async function saveEstimate (issue, text) {
  const value = text === '' ? null : Number(text)
  if (value !== null && !(value >= 0)) {
    say('An estimate is a number of 0 or more (empty clears it).', true)
    return
  }
  try {
    await api(`/p1/repositories/${state.choice.repo}/issues/${issue.issue_number}/estimate`, { method: 'PUT', body: JSON.stringify({ estimate: value }) })
  } catch (err) {
    say(`Could not set the estimate of #${issue.issue_number}: ${err.message}`, true)
    return
  }
  if (value === null) delete issue.estimate
  else issue.estimate = { value }
  say(value === null ? `Cleared the estimate of #${issue.issue_number}.` : `#${issue.issue_number} is estimated at ${value}.`)
  refresh()
}

// Start

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault()
  signIn($('token').value.trim())
})
$('boards').addEventListener('change', (event) => choose(event.target.value))
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY)
  state.token = null
  state.choice = null
  say('Signed out.')
  showSignIn()
})
document.addEventListener('visibilitychange', () => { if (!document.hidden && state.choice !== null) refresh() })
if (state.token === null) showSignIn()
else signIn(state.token)
