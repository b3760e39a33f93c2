// The entry behind bin/run.js. Listing (bare `hmm`, `hmm ls`) is what users
// type most, so it takes a path that does not load oclif; everything else,
// help and errors included, goes through oclif.
import {reportError} from './ui/errors.js'
import {RUN_FLAGS_WITH_VALUE, splitAtCommand} from './ui/split-argv.js'

const LIST_FLAGS = new Set(['-a', '--all', '--json'])

function isPlainListing(argv: string[]): boolean {
  const flags = argv[0] === 'ls' ? argv.slice(1) : argv
  return (argv.length === 0 || argv[0] === 'ls') && flags.every(flag => LIST_FLAGS.has(flag))
}

/**
 * Puts `--` before run's command, so oclif sees the command's own arguments
 * as nothing of hmm's (`hmm run grep --help` must not print hmm's help).
 */
function markCommand(runArgv: string[]): string[] {
  const {own, command} = splitAtCommand(runArgv, RUN_FLAGS_WITH_VALUE)
  return command.length > 0 ? [...own, '--', ...command] : own
}

export async function main(argv: string[], root: string): Promise<void> {
  try {
    if (isPlainListing(argv)) {
      const {listing} = await import('./workspaces/listing.js')
      process.stdout.write(listing({all: argv.includes('-a') || argv.includes('--all'), json: argv.includes('--json')}))
      return
    }
    const oclif = await import('@oclif/core')
    await oclif.run(argv[0] === 'run' ? ['run', ...markCommand(argv.slice(1))] : argv, root)
    await oclif.flush()
  } catch (error) {
    process.exitCode = reportError(error)
  }
}
