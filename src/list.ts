// Bare `hmm` and `hmm ls [-a] [-l] [--json]`: what users type most, so it runs
// from one bundled file (dist/list.bundle.cjs, see scripts/bundle.js) that
// loads SQLite and nothing of oclif. Anything else — other flags, --help,
// errors of usage — goes through oclif (bin/run.js decides).
import {writeSync} from 'node:fs'
import {reportError, say} from './ui/errors.js'
import {isTerminal} from './ui/terminal.js'
import {completions} from './app/complete.js'
import {listing, noWorkspacesHint} from './app/ls.js'

/**
 * Straight to descriptor 1: making process.stdout (a stream) would cost a
 * tenth of the listing's time. A reader that went away (`hmm | head`) ends
 * the output; a non-blocking descriptor that is full gets the rest through
 * process.stdout, which waits for it. Returns whether all is written
 * (false: process.stdout still has some to write).
 */
function print(text: string): boolean {
  const bytes = Buffer.from(text)
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written)
  } catch (error) {
    const code = (error as {code?: string}).code
    if (code === 'EPIPE') return true
    if (code !== 'EAGAIN') throw error
    process.stdout.write(bytes.subarray(written))
    return false
  }
  return true
}

/**
 * Lists as `hmm ls` does; `bare`: the command line was `hmm` alone. Returns
 * true when everything is written and nothing else is to be said: the
 * caller may then end the process at once (bin/run.js says why).
 */
export function listMain(argv: string[], bare = false): boolean {
  try {
    const listed = listing({
      all: argv.includes('-a') || argv.includes('--all'),
      json: argv.includes('--json'),
      long: argv.includes('-l') || argv.includes('--long'),
    })
    const written = print(listed)
    // Bare `hmm` that lists nothing says, to a person only, where to start.
    if (!(bare && listed === '' && isTerminal(2))) return written
    say(noWorkspacesHint())
  } catch (error) {
    process.exitCode = reportError(error)
  }
  return false
}

/** `hmm __complete WORD...`: the candidates for the last word, for the completion scripts; returns as listMain does. */
export function completeMain(words: string[]): boolean {
  try {
    const candidates = completions(words)
    return print(candidates.map(candidate => `${candidate}\n`).join(''))
  } catch {
    // A completion that fails offers nothing; the shell falls back to files.
    return true
  }
}
