// Bundles the board page's script (board/src, Preact components) into one minified ES module with
// esbuild. `npm run build` and the single executable's build call it; a server run from the sources
// (the tests) calls it once at start-up, when no bundled board.js lies beside the page.
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

export const BOARD_FILES = ['index.html', 'board.css', 'icon.svg']

/** The page's script as text. */
export async function bundleBoard () {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./src/main.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'warning'
  })
  return result.outputFiles[0].text
}
