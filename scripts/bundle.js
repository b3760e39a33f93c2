// Bundles the listing path (dist/list.js and what it imports, better-sqlite3's
// JavaScript included) into one file: loading one module instead of dozens
// is most of what separates `hmm ls` from a bare `node -e 0`.
import {build} from 'esbuild'

await build({
  entryPoints: [new URL('../dist/list.js', import.meta.url).pathname],
  outfile: new URL('../dist/list.bundle.js', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // better-sqlite3 is CommonJS and calls require(); give the bundle one.
  banner: {js: "import {createRequire as createRequireForBundle} from 'node:module'; const require = createRequireForBundle(import.meta.url);"},
  logLevel: 'warning',
})
