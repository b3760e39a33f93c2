// Builds native-helpers/build/hmm-helper from the *.c files beside this one
// (one per job, sharing hmm-helper.h) with the system's C compiler. Run by `npm install` (the prepare step), so that the helper
// that confines commands is compiled on the machine that runs it, from source
// anyone can read, never downloaded prebuilt.
//
//   node native-helpers/build.js
//
// CC chooses the compiler (default `cc`), as make does. Without a compiler
// it says what to install in one line; on a compile error it shows the
// compiler's own output. Either way it exits 1.

import {spawnSync} from 'node:child_process'
import {accessSync, constants, mkdirSync, readdirSync, statSync} from 'node:fs'
import {delimiter, dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = dirname(here)
const sources = readdirSync(here)
  .filter(name => name.endsWith('.c'))
  .sort()
  .map(name => relative(root, join(here, name)))
const output = relative(root, join(here, 'build', 'hmm-helper'))

// CC may carry words of its own ("ccache gcc"), as it may for make.
const [cc, ...ccArgs] = (process.env.CC || 'cc').trim().split(/\s+/)

mkdirSync(join(here, 'build'), {recursive: true})

const result = spawnSync(cc, [...ccArgs, '-O2', '-Wall', '-Wextra', '-std=gnu11', '-o', output, ...sources, '-lpthread'], {cwd: root, stdio: 'inherit'})

/**
 * Whether the compiler is nowhere to be run: a name found in no directory of
 * PATH. A PATH with a directory the user cannot search (root's, kept by su)
 * makes the system say EACCES, not ENOENT, for a program that is simply not
 * there.
 */
function missing(program) {
  if (program.includes('/')) return false
  return !(process.env.PATH ?? '').split(delimiter).some(dir => {
    try {
      const path = join(dir || '.', program)
      accessSync(path, constants.X_OK)
      return statSync(path).isFile()
    } catch {
      return false
    }
  })
}

if (result.error) {
  if (result.error.code === 'ENOENT' || (result.error.code === 'EACCES' && missing(cc))) {
    process.stderr.write('hmm: building the sandbox helper needs a C compiler (cc); install one (e.g. apt install gcc) and run npm install again\n')
  } else {
    process.stderr.write(`hmm: building the sandbox helper: ${cc}: ${result.error.message}\n`)
  }
  process.exit(1)
}
if (result.status !== 0) {
  // The compiler's output went straight to the terminal (stdio: inherit).
  process.stderr.write(`hmm: building the sandbox helper failed (${cc} ${result.signal ? `was killed by ${result.signal}` : `exited ${result.status}`})\n`)
  process.exit(1)
}
