#!/usr/bin/env node
// The node-gyp that `npm install` in a checkout runs for the dependencies'
// install scripts (this package's bin, in node_modules/.bin, comes before
// npm's own on their PATH; .npmrc has it installed in time): npm's own,
// given the headers of the Node that
// runs it where they came with it. better-sqlite3 fetches its prebuilt
// binary from github.com, or else builds from source with node-gyp, which
// fetches Node's headers from nodejs.org: where only the npm registry can
// be reached, the install stopped there. Official tarballs, nvm,
// NodeSource and Homebrew install the headers beside Node
// (<prefix>/include/node); node-gyp takes them by itself only where Node was
// built to say so, after the check made here too: their version is Node's.
// (npm's `node-gyp` setting would name this file, but npm 11 ignores it for
// dependencies.)
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

const prefix = dirname(dirname(process.execPath))

/** The version of the headers installed beside Node, with what node-gyp reads of them; undefined where there are none. */
function localHeadersVersion() {
  const headers = join(prefix, 'include', 'node')
  if (!existsSync(join(headers, 'common.gypi')) || !existsSync(join(headers, 'node_version.h'))) return undefined
  const text = readFileSync(join(headers, 'node_version.h'), 'utf8')
  const part = name => text.match(new RegExp(`^#define NODE_${name}_VERSION (\\d+)$`, 'm'))?.[1]
  return `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`
}

if (!process.env.npm_execpath) {
  process.stderr.write('node-gyp: this one is for npm install in a checkout of hmm (npm_execpath is not set)\n')
  process.exit(1)
}
const env = {...process.env}
if (!env.npm_config_nodedir && localHeadersVersion() === process.version) env.npm_config_nodedir = prefix
// npm's own node-gyp lies beside its CLI.
const nodeGyp = createRequire(env.npm_execpath).resolve('node-gyp/bin/node-gyp.js')
const result = spawnSync(process.execPath, [nodeGyp, ...process.argv.slice(2)], {stdio: 'inherit', env})
process.exit(result.status ?? 1)
