import type { FastifyInstance, FastifyReply } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** a route of the GraphQL explorer's page: public */
    explorer?: boolean
  }
}

/**
 * The in-browser explorer at /graphiql: a page of our own with nothing loaded from elsewhere (the
 * server may run offline, and mercurius' GraphiQL loads React from a CDN). It runs documents
 * against ./public/graphql with the board page's session or a token typed in, and lists the
 * schema from introspection.
 */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL explorer</title><link rel="stylesheet" href="graphiql/explorer.css"></head>
<body>
<header><h1>GraphQL explorer</h1>
<label>Token <input id="token" type="password" autocomplete="off" placeholder="blank: this browser's session"></label>
<button id="run" type="button" title="Ctrl+Enter">Run</button></header>
<main>
<section><label for="query">Query</label><textarea id="query" spellcheck="false"></textarea>
<label for="variables">Variables (JSON)</label><textarea id="variables" spellcheck="false">{}</textarea></section>
<section><label for="result">Result</label><pre id="result" aria-live="polite"></pre></section>
<nav aria-label="Schema"><label for="type">Schema</label><select id="type"></select><div id="fields"></div></nav>
</main>
<script src="graphiql/explorer.js"></script>
</body></html>
`

const STYLE = `body{margin:0;font:14px system-ui,sans-serif;color:#1f2328;background:#f6f8fa}
header{display:flex;gap:1rem;align-items:center;padding:.5rem 1rem;background:#fff;border-bottom:1px solid #d0d7de}
h1{font-size:1rem;margin:0 auto 0 0}
main{display:grid;grid-template-columns:2fr 2fr 1fr;gap:1rem;padding:1rem;height:calc(100vh - 4rem);box-sizing:border-box}
section,nav{display:flex;flex-direction:column;min-height:0}
label{font-weight:600;margin:.25rem 0}
textarea,pre{font:13px ui-monospace,monospace;border:1px solid #d0d7de;border-radius:6px;padding:.5rem;background:#fff;margin:0}
#query{flex:3}#variables{flex:1}#result{flex:1;overflow:auto;white-space:pre-wrap}
#fields{overflow:auto;font:12px ui-monospace,monospace}#fields div{padding:.15rem 0}#fields a{cursor:pointer;color:#0969da}
button{padding:.3rem 1rem}
`

const SCRIPT = `(function () {
  var $ = function (id) { return document.getElementById(id) }
  var endpoint = new URL('public/graphql', document.baseURI).href
  var types = {}
  $('query').value = localStorage.getItem('graphiql.query') || '{\\n  viewer {\\n    id\\n    name\\n    searchWorkspaces(query: "") { nodes { id name } }\\n  }\\n}\\n'
  $('token').value = sessionStorage.getItem('graphiql.token') || ''
  function post (query, variables) {
    var headers = { 'content-type': 'application/json' }
    var token = $('token').value.trim()
    if (token !== '') headers.authorization = 'Bearer ' + token
    return fetch(endpoint, { method: 'POST', headers: headers, body: JSON.stringify({ query: query, variables: variables }) })
      .then(function (res) { return res.text().then(function (text) { return { status: res.status, text: text } }) })
  }
  function run () {
    var variables
    try { variables = JSON.parse($('variables').value || '{}') } catch (e) { $('result').textContent = 'Variables are not JSON: ' + e.message; return }
    localStorage.setItem('graphiql.query', $('query').value)
    sessionStorage.setItem('graphiql.token', $('token').value)
    $('result').textContent = '…'
    post($('query').value, variables).then(function (r) {
      var shown = r.text
      try { shown = JSON.stringify(JSON.parse(r.text), null, 2) } catch (e) {}
      $('result').textContent = (r.status === 200 ? '' : 'HTTP ' + r.status + '\\n') + shown
      if (Object.keys(types).length === 0 && r.status === 200) loadSchema()
    }, function (e) { $('result').textContent = String(e) })
  }
  function typeName (t) { return t.kind === 'NON_NULL' ? typeName(t.ofType) + '!' : t.kind === 'LIST' ? '[' + typeName(t.ofType) + ']' : t.name }
  function baseName (t) { return t.ofType ? baseName(t.ofType) : t.name }
  function show (name) {
    var t = types[name]
    $('type').value = name
    var box = $('fields')
    box.textContent = ''
    var list = (t && (t.fields || t.inputFields || t.enumValues)) || []
    list.forEach(function (f) {
      var row = document.createElement('div')
      var args = (f.args || []).map(function (a) { return a.name + ': ' + typeName(a.type) }).join(', ')
      row.appendChild(document.createTextNode(f.name + (args ? '(' + args + ')' : '') + (f.type ? ': ' : '')))
      if (f.type) {
        var link = document.createElement('a')
        link.textContent = typeName(f.type)
        link.addEventListener('click', function () { show(baseName(f.type)) })
        row.appendChild(link)
      }
      if (f.description) row.title = f.description
      box.appendChild(row)
    })
  }
  function loadSchema () {
    var q = '{ __schema { types { name kind description fields { name description args { name type { ...T } } type { ...T } } inputFields { name type { ...T } } enumValues { name } } } }' +
      ' fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }'
    post(q, {}).then(function (r) {
      if (r.status !== 200) return
      var data = JSON.parse(r.text).data
      if (!data) return
      var select = $('type')
      select.textContent = ''
      data.__schema.types.filter(function (t) { return t.name.indexOf('__') !== 0 }).sort(function (a, b) { return a.name < b.name ? -1 : 1 })
        .forEach(function (t) { types[t.name] = t; var o = document.createElement('option'); o.textContent = t.name; select.appendChild(o) })
      show('Query')
    })
  }
  $('type').addEventListener('change', function () { show($('type').value) })
  $('run').addEventListener('click', run)
  document.addEventListener('keydown', function (e) { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run() } })
  loadSchema()
})()
`

/** Nothing but this origin's own files and its GraphQL endpoint. */
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

export function explorerRoutes (fastify: FastifyInstance): void {
  const options = { schema: { hide: true }, config: { explorer: true } }
  const send = (type: string, body: string) => async (_: unknown, reply: FastifyReply) =>
    await reply.header('content-type', type).header('content-security-policy', POLICY).header('cache-control', 'no-cache').send(body)
  fastify.get('/graphiql', options, send('text/html; charset=utf-8', PAGE))
  fastify.get('/graphiql/explorer.js', options, send('text/javascript; charset=utf-8', SCRIPT))
  fastify.get('/graphiql/explorer.css', options, send('text/css; charset=utf-8', STYLE))
}

/** The explorer's routes are public: the page holds nothing; the queries it sends are signed in. */
export const isExplorerRoute = (config: { explorer?: boolean } | undefined): boolean => config?.explorer === true
