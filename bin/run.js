#!/usr/bin/env node
// The entry: as little as possible before the command runs. Listing (bare
// `hmm`, `hmm ls [-a] [--json]`) takes a bundled path without oclif; every
// other command line, help and usage errors included, goes through oclif.
const argv = process.argv.slice(2)
const LIST_FLAGS = new Set(['-a', '--all', '--json'])
const listFlags = argv[0] === 'ls' ? argv.slice(1) : argv

if ((argv.length === 0 || argv[0] === 'ls') && listFlags.every(flag => LIST_FLAGS.has(flag))) {
  const {listMain} = await import('../dist/list.bundle.js')
  listMain(listFlags)
} else {
  const {main} = await import('../dist/main.js')
  await main(argv, import.meta.url)
}
