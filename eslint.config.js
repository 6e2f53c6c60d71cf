import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'dist-sea/**', 'node_modules/**'] }),
  // The board page runs in the browser.
  { files: ['board/**/*.js'], languageOptions: { globals: { location: 'readonly', history: 'readonly', Option: 'readonly', sessionStorage: 'readonly', document: 'readonly', fetch: 'readonly' } } },
  {
    rules: {
      // The legacy API's fields are snake_case (repo_id, issue_number); names follow them.
      camelcase: 'off',
      // A TypeBox schema and the type derived from it share one name (`Fixture`, `IssueRef`).
      '@typescript-eslint/no-redeclare': 'off',
      // Lines a reader can take in at once; long strings and URLs may run past.
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true }]
    }
  }
]
