// The entry behind bin/run.js for everything but plain listing (list.ts)
// and the start of run, exec and diff (start.ts; their help and usage
// errors are this entry's): oclif parses, finds the command, prints help;
// errors become one line.
// Bundled with oclif and every command into dist/main.bundle.cjs.
import {flush} from '@oclif/core/flush'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {run} from '@oclif/core/run'
import {COMMANDS} from './commands/index.js'
import {debugStep, HmmError, reportError} from './ui/errors.js'
import {unknownCommand} from './ui/suggest.js'
import {EXEC_FLAGS_WITH_VALUE, RUN_FLAGS_WITH_VALUE, splitAtCommand} from './ui/split-argv.js'

/**
 * Puts `--` before run's command (exec's workspace and command), so oclif
 * sees the command's own arguments as nothing of hmm's (`hmm run grep
 * --help` must not print hmm's help).
 */
function markCommand(argv: string[], flagsWithValue: string[]): string[] {
  const {own, command} = splitAtCommand(argv, flagsWithValue)
  return command.length > 0 ? [...own, '--', ...command] : own
}

const COMMAND_FLAGS = new Map([
  ['run', RUN_FLAGS_WITH_VALUE],
  ['exec', EXEC_FLAGS_WITH_VALUE],
])

/** Flags oclif answers itself, before any command. */
const TOP_FLAGS = new Set(['--help', '-h'])

/** hmm's version asked for with a flag (-V as in most CLIs). */
const VERSION_FLAGS = new Set(['--version', '-V'])

/**
 * The command line as oclif should see it: `hmm -a`, `hmm --json` and other
 * flags alone are `hmm ls`'s; a mistyped command is refused here, with the
 * nearest one suggested.
 */
function normalize(argv: string[]): string[] {
  const first = argv[0]
  if (first === undefined) return argv
  // `hmm -h CMD` is `hmm help CMD`, a mistyped CMD answered the same way.
  if (TOP_FLAGS.has(first)) return argv.length > 1 && !argv[1].startsWith('-') ? ['help', ...argv.slice(1)] : argv
  // Asked for before any command, the version is the answer, whatever follows (as git does);
  // one answer for both forms (oclif's own would name the package, hmm-sandbox).
  const command = argv.findIndex(word => !word.startsWith('-'))
  if (argv.slice(0, command === -1 ? argv.length : command).some(flag => VERSION_FLAGS.has(flag))) return ['version']
  if (first.startsWith('-')) return ['ls', ...argv]
  if (!Object.hasOwn(COMMANDS, first)) throw new HmmError(unknownCommand(first, Object.keys(COMMANDS)))
  return argv
}

export async function main(givenArgv: string[], root: string): Promise<void> {
  debugStep('main: bundle loaded')
  try {
    const argv = normalize(givenArgv)
    const flagsWithValue = COMMAND_FLAGS.get(argv[0])
    // No user plugins: oclif would load those listed in its data directory's package.json (~/.local/share/hmm,
    // which a command granted -w ~/.local/share may write once hmm's data lies elsewhere) and run their hooks here,
    // outside the sandbox. hmm has no plugins.
    // Named as the command (help's VERSION, hmm --version), not as the package: hmm was taken on npm.
    const pjson = {...JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')), name: 'hmm'}
    await run(flagsWithValue ? [argv[0], ...markCommand(argv.slice(1), flagsWithValue)] : argv, {root, userPlugins: false, pjson})
    await flush()
  } catch (error) {
    process.exitCode = reportError(error)
  }
}

export {COMMANDS}
