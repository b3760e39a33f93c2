// The entry behind bin/run.js for everything but plain listing (list.ts):
// oclif parses, finds the command, prints help; errors become one line.
// Bundled with oclif and every command into dist/main.bundle.cjs.
import {flush} from '@oclif/core/flush'
import {run} from '@oclif/core/run'
import {reportError} from './ui/errors.js'
import {RUN_FLAGS_WITH_VALUE, splitAtCommand} from './ui/split-argv.js'

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
    await run(argv[0] === 'run' ? ['run', ...markCommand(argv.slice(1))] : argv, root)
    await flush()
  } catch (error) {
    process.exitCode = reportError(error)
  }
}

export {COMMANDS} from './commands/index.js'
