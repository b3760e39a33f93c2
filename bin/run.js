#!/bin/sh
':' //; if [ -n "$NODE_EXTRA_CA_CERTS" ]; then export HMM_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; fi; exec node "$0" "$@"
// The entry: as little as possible before the command runs. CommonJS (see
// bin/package.json): Node starts a CommonJS entry faster than an ES module.
// Listing (bare `hmm`, `hmm ls [-a] [-l] [--json]`) runs from one bundled file
// without oclif; `hmm run`, `hmm exec` and `hmm diff` from another, with
// oclif's parser only; every other command line, and their help and usage
// errors, go through oclif.
//
// The first two lines are a shell script that starts this file with node,
// NODE_EXTRA_CA_CERTS moved aside: Node before 23 reads every certificate it
// names as it starts (40-50 ms for a system's bundle, a third of `hmm run
// true`), and hmm makes no TLS connection of its own. To Node, line 2 is a
// string and a comment. What hmm starts gets the variable back, as it was.
'use strict'
if (process.env.HMM_NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.NODE_EXTRA_CA_CERTS = process.env.HMM_NODE_EXTRA_CA_CERTS
  delete process.env.HMM_NODE_EXTRA_CA_CERTS
}
const fs = require('node:fs')
const path = require('node:path')

/**
 * Loads one of hmm's bundled CommonJS files with V8's code cache for it
 * (FILE.cache, beside it): compiling the bundle is a large part of a
 * command's start, and the cache skips it. What module.enableCompileCache
 * does on Node 22; hmm runs on Node 20. The cache is made (after the first
 * run, with what that run compiled) where the directory is writable, and
 * made again when it is not for this very file (V8 itself checks only the
 * source's length) or V8 rejects it (another Node).
 */
function loadBundle(name) {
  // Node's CommonJS Module class, as the loader made this file: require('node:module') would load the ES module
  // loader and the source-map support with it, a millisecond of the listing's start.
  const Module = module.constructor
  const vm = require('node:vm')
  const file = path.join(__dirname, '..', 'dist', name)
  if (!fs.existsSync(file)) {
    const root = path.join(__dirname, '..')
    process.stderr.write(`hmm: ${path.join(root, 'dist')} is not built: run npm install (or npm run build) in ${root}\n`)
    process.exit(1)
  }
  const cacheFile = `${file}.cache`
  // The bundles are ASCII (scripts/bundle.js sees to it): latin1 is the same text, decoded fastest.
  const source = fs.readFileSync(file, 'latin1')
  const stat = fs.statSync(file)
  const key = Buffer.from(`${stat.size} ${stat.mtimeMs} ${stat.ino}\n`)
  let cachedData
  try {
    const cache = fs.readFileSync(cacheFile)
    if (cache.subarray(0, key.length).equals(key)) cachedData = cache.subarray(key.length)
  } catch {}
  const script = new vm.Script(Module.wrap(source), {filename: file, cachedData})
  const bundle = new Module(file, module)
  bundle.filename = file
  bundle.paths = Module._nodeModulePaths(path.dirname(file))
  // oclif loads the commands from this same file: it must find it loaded.
  Module._cache[file] = bundle
  const bundleRequire = id => bundle.require(id)
  bundleRequire.resolve = (request, options) => Module._resolveFilename(request, bundle, false, options)
  bundleRequire.cache = Module._cache
  bundleRequire.main = require.main
  script.runInThisContext()(bundle.exports, bundleRequire, bundle, file, path.dirname(file))
  bundle.loaded = true
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('exit', () => {
      try {
        fs.accessSync(path.dirname(file), fs.constants.W_OK)
        const temporary = `${cacheFile}.${process.pid}`
        fs.writeFileSync(temporary, Buffer.concat([key, script.createCachedData()]))
        fs.renameSync(temporary, cacheFile)
      } catch {}
    })
  }
  return bundle.exports
}

/** Every other command line, through oclif, which finds its configuration in the project's package.json, one level up. */
function main() {
  loadBundle('main.bundle.cjs').main(argv, path.join(__dirname, '..'))
}

const argv = process.argv.slice(2)
const LIST_FLAGS = new Set(['-a', '--all', '-l', '--long', '--json'])
const listFlags = argv[0] === 'ls' ? argv.slice(1) : argv

// A command ends the process as soon as all is written: at a natural exit
// Node would first wait for V8's background tasks (compiling what the
// command ran) and free the whole heap, milliseconds of every command's time.
// process.exit still runs the 'exit' handlers (the code cache above).

/**
 * Ends the process once stdout and stderr have taken what hmm wrote: to a
 * pipe Node writes without blocking, and what a full pipe did not take yet
 * waits in a queue that process.exit would drop (hmm's warnings and errors
 * behind a slow reader, or behind a command that filled the pipe). A write's
 * callback comes after all queued before it, or with the stream's error.
 */
function exitWhenWritten() {
  const pending = [process.stdout, process.stderr].filter(stream => stream.writableLength > 0)
  let left = pending.length
  if (left === 0) process.exit()
  for (const stream of pending) {
    let done = false
    const written = () => {
      if (done) return
      done = true
      if (--left === 0) process.exit()
    }
    stream.once('error', written)
    stream.write('', written)
  }
}

if ((argv.length === 0 || argv[0] === 'ls') && listFlags.every(flag => LIST_FLAGS.has(flag))) {
  if (loadBundle('list.bundle.cjs').listMain(listFlags, argv.length === 0)) process.exit()
} else if (argv[0] === '__complete') {
  // The completion scripts' question: answered fast, from the same bundle.
  if (loadBundle('list.bundle.cjs').completeMain(argv.slice(1))) process.exit()
} else if (argv[0] === 'run' || argv[0] === 'exec' || argv[0] === 'diff') {
  // Their help and usage errors are oclif's: startMain answers false, having done nothing.
  loadBundle('start.bundle.cjs')
    .startMain(argv)
    .then(started => (started ? exitWhenWritten() : main()))
} else {
  main()
}
