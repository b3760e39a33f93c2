// Bare `hmm` and `hmm ls [-a] [--json]`: what users type most, so it runs
// from one bundled file (dist/list.bundle.cjs, see scripts/bundle.js) that
// loads SQLite and nothing of oclif. Anything else — other flags, --help,
// errors of usage — goes through oclif (bin/run.js decides).
import {reportError} from './ui/errors.js'
import {listing} from './workspaces/listing.js'

export function listMain(argv: string[]): void {
  try {
    process.stdout.write(listing({all: argv.includes('-a') || argv.includes('--all'), json: argv.includes('--json')}))
  } catch (error) {
    process.exitCode = reportError(error)
  }
}
