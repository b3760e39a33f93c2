// Bundles what bin/run.js loads into three CommonJS files, one module each
// instead of hundreds, and no ES module loader: most of what separates a
// command's start from a bare `node -e 0`.
// - dist/list.bundle.cjs: the listing path (dist/list.js and what it imports,
//   better-sqlite3's JavaScript included), without oclif.
// - dist/start.bundle.cjs: `hmm run`, `hmm exec` and `hmm diff` (dist/start.js), with
//   oclif's parser but not its Command and Config.
// - dist/main.bundle.cjs: everything else: oclif, every command, execa, and
//   what they import (oclif finds the commands in it: package.json's
//   oclif.commands, "explicit" strategy).
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {build} from 'esbuild'

const BUNDLES = {'list.js': 'list.bundle.cjs', 'start.js': 'start.bundle.cjs', 'main.js': 'main.bundle.cjs'}

/**
 * chalk guesses colour support when it is loaded (its vendored
 * supports-color, which loads node:tty and with it node:net and the streams);
 * hmm never uses that guess (ui/colour.ts gives every Chalk its level), so
 * the bundles take the module's browser build, which guesses "none" without
 * loading anything.
 */
const chalkGuessesNothing = {
  name: 'chalk-guesses-nothing',
  setup(build) {
    build.onResolve({filter: /^#supports-color$/}, args =>
      /[/\\]chalk[/\\]source[/\\]index\.js$/.test(args.importer) ? {path: join(dirname(args.importer), 'vendor', 'supports-color', 'browser.js')} : undefined,
    )
  },
}

/**
 * oclif sorts the commands with localeCompare whenever it starts (its config/plugin.js), and that first call
 * starts ICU's collation: 7-10 ms of the start of every command through oclif. hmm's command IDs are lowercase
 * ASCII words, which code units order as the locale does, so the bundles compare them so. The build fails if
 * oclif's line is not there as it was.
 */
const SORT_BY_LOCALE = '.sort((a, b) => a.id.localeCompare(b.id))'
const commandsSortedByCodeUnits = {
  name: 'commands-sorted-by-code-units',
  setup(build) {
    build.onLoad({filter: /[/\\]@oclif[/\\]core[/\\]lib[/\\]config[/\\]plugin\.js$/}, async args => {
      const source = await readFile(args.path, 'utf8')
      if (!source.includes(SORT_BY_LOCALE)) throw new Error(`${args.path} no longer holds ${SORT_BY_LOCALE} (scripts/bundle.js)`)
      return {contents: source.replace(SORT_BY_LOCALE, '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))'), loader: 'js'}
    })
  },
}

/**
 * oclif's logger loads the debug package, which looks at the terminal and its
 * colours as it loads (node:tty, supports-color, the environment): 7 ms of
 * the start of `hmm run true`, for messages oclif's parser never writes on
 * the way to starting a command (help and usage errors, which could, go
 * through dist/main.bundle.cjs). In dist/start.bundle.cjs its debug is one
 * that is never enabled.
 */
const debugNeverEnabled = {
  name: 'debug-never-enabled',
  setup(build) {
    build.onResolve({filter: /^debug$/}, args =>
      /[/\\]@oclif[/\\]core[/\\]lib[/\\]logger\.js$/.test(args.importer) ? {path: 'debug', namespace: 'debug-never-enabled'} : undefined,
    )
    build.onLoad({filter: /.*/, namespace: 'debug-never-enabled'}, () => ({
      contents: 'module.exports = () => Object.assign(() => {}, {enabled: false})',
      loader: 'js',
    }))
  },
}

/**
 * bin/run.js reads the bundles as latin1, the fastest decoding, which is right only where they are ASCII (and
 * a single other character would make the whole source a two-byte string, slower to read and to compile).
 * esbuild writes non-ASCII characters as escapes, but not in regular expressions: ansis's pattern of ANSI
 * sequences holds U+009B. Such C1 control characters become \x escapes, the same character in a regular
 * expression or a string; any other non-ASCII character fails the build.
 */
function makeAscii(file) {
  const source = readFileSync(file, 'utf8')
  const ascii = source.replace(/(\\?)([\u0080-\u009f])/g, (_, backslash, character) => {
    if (backslash) throw new Error(`${file}: an escaped C1 character (${JSON.stringify(character)}) that \\x cannot replace`)
    return `\\x${character.charCodeAt(0).toString(16).toUpperCase()}`
  })
  const other = /[^\0-\x7f]/.exec(ascii)
  if (other) throw new Error(`${file}: ${JSON.stringify(other[0])} at ${other.index}; bin/run.js reads the bundles as latin1, ASCII only`)
  writeFileSync(file, ascii)
}

for (const [entry, out] of Object.entries(BUNDLES)) {
  // bin/run.js keeps V8's code cache of each bundle beside it; a new bundle starts without.
  rmSync(new URL(`../dist/${out}.cache`, import.meta.url), {force: true})
  await build({
    entryPoints: [fileURLToPath(new URL(`../dist/${entry}`, import.meta.url))],
    outfile: fileURLToPath(new URL(`../dist/${out}`, import.meta.url)),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // oclif loads TypeScript only to run uncompiled sources, which hmm never does.
    external: ['typescript', 'ts-node', 'tsx'],
    // The sources find files next to themselves with import.meta.dirname (and .filename): in a bundle, its own.
    // Never import.meta.url: making a file: URL of __filename costs the listing a millisecond at start.
    define: {'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename'},
    plugins: [chalkGuessesNothing, commandsSortedByCodeUnits, ...(out === 'start.bundle.cjs' ? [debugNeverEnabled] : [])],
    logLevel: 'warning',
  })
  makeAscii(fileURLToPath(new URL(`../dist/${out}`, import.meta.url)))
}
