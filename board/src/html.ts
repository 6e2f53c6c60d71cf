// Preact's elements from tagged templates (htm): values are escaped as text, never parsed as HTML.
export { html } from 'htm/preact'
