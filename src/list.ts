// Bare `hmm` and `hmm ls [-a] [-l] [--json]`: what users type most, so it runs
// from one bundled file (dist/list.bundle.cjs, see scripts/bundle.js) that
// loads SQLite and nothing of oclif. Anything else — other flags, --help,
// errors of usage — goes through oclif (bin/run.js decides).
import {writeSync} from 'node:fs'
import {reportError, say} from './ui/errors.js'
import {isTerminal} from './ui/terminal.js'
import {completions} from './app/complete.js'
import {listing} from './app/ls.js'

/**
 * Straight to descriptor 1: making process.stdout (a stream) would cost a
 * tenth of the listing's time. A reader that went away (`hmm | head`) ends
 * the output; a non-blocking descriptor that is full gets the rest through
 * process.stdout, which waits for it.
 */
function print(text: string): void {
  const bytes = Buffer.from(text)
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written)
  } catch (error) {
    const code = (error as {code?: string}).code
    if (code === 'EAGAIN') process.stdout.write(bytes.subarray(written))
    else if (code !== 'EPIPE') throw error
  }
}

/** Lists as `hmm ls` does; `bare`: the command line was `hmm` alone. */
export function listMain(argv: string[], bare = false): void {
  try {
    const listed = listing({
      all: argv.includes('-a') || argv.includes('--all'),
      json: argv.includes('--json'),
      long: argv.includes('-l') || argv.includes('--long'),
    })
    print(listed)
    // Bare `hmm` that lists nothing says, to a person only, where to start.
    if (bare && listed === '' && isTerminal(2)) say('no workspaces here yet: hmm run makes one (hmm help lists the commands)')
  } catch (error) {
    process.exitCode = reportError(error)
  }
}

/** `hmm __complete WORD...`: the candidates for the last word, for the completion scripts. */
export function completeMain(words: string[]): void {
  try {
    const candidates = completions(words)
    print(candidates.map(candidate => `${candidate}\n`).join(''))
  } catch {
    // A completion that fails offers nothing; the shell falls back to files.
  }
}
