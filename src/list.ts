// Bare `hmm` and `hmm ls [-a] [--json]`: what users type most, so it runs
// from one bundled file (dist/list.bundle.cjs, see scripts/bundle.js) that
// loads SQLite and nothing of oclif. Anything else — other flags, --help,
// errors of usage — goes through oclif (bin/run.js decides).
import {writeSync} from 'node:fs'
import {reportError} from './ui/errors.js'
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

export function listMain(argv: string[]): void {
  try {
    print(listing({all: argv.includes('-a') || argv.includes('--all'), json: argv.includes('--json')}))
  } catch (error) {
    process.exitCode = reportError(error)
  }
}
