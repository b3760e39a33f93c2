// Bundles the listing path (dist/list.js and what it imports, better-sqlite3's
// JavaScript included) into one CommonJS file that bin/run.js requires:
// loading one module instead of dozens, and no ES module loader, is most of
// what separates `hmm ls` from a bare `node -e 0`.
import {build} from 'esbuild'

await build({
  entryPoints: [new URL('../dist/list.js', import.meta.url).pathname],
  outfile: new URL('../dist/list.bundle.cjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // The sources find files next to themselves with import.meta.url.
  define: {'import.meta.url': 'importMetaUrl'},
  banner: {js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;"},
  logLevel: 'warning',
})
