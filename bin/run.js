#!/usr/bin/env node
// The entry: as little as possible before the command runs. CommonJS (see
// bin/package.json): Node starts a CommonJS entry faster than an ES module.
// Listing (bare `hmm`, `hmm ls [-a] [--json]`) runs from one bundled file
// without oclif; every other command line, help and usage errors included,
// goes through oclif.
'use strict'
const argv = process.argv.slice(2)
const LIST_FLAGS = new Set(['-a', '--all', '--json'])
const listFlags = argv[0] === 'ls' ? argv.slice(1) : argv

if ((argv.length === 0 || argv[0] === 'ls') && listFlags.every(flag => LIST_FLAGS.has(flag))) {
  require('../dist/list.bundle.cjs').listMain(listFlags)
} else {
  // oclif finds its configuration in the project's package.json, one level up.
  require('../dist/main.bundle.cjs').main(argv, require('node:path').join(__dirname, '..'))
}
