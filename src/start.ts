// `hmm run` and `hmm exec` start from a bundled file of their own
// (dist/start.bundle.cjs, see scripts/bundle.js): their flags parsed by
// oclif's parser, then the command started, without oclif's Command class
// and so without its Config, which loads the manifest, looks for the shell
// and WSL, sorts the commands by locale (starting ICU), and brings a glob
// library and more into the bundle. Help, and anything the parser refuses,
// go through oclif as before: startMain answers false and bin/run.js runs
// main.ts with the same arguments.
import {flush} from '@oclif/core/flush'
import type {FlagInput, InferredFlags} from '@oclif/core/interfaces'
import {parse} from '@oclif/core/parser'
import {EXEC, RUN, type Startable} from './commands/run-and-exec.js'
import {reportError} from './ui/errors.js'
import {splitAtCommand} from './ui/split-argv.js'

/** oclif shows the help for these anywhere in hmm's part of the line (helpAddition in its main.js), even as a flag's value. */
const HELP_FLAGS = new Set(['--help', '-h'])

async function start<F extends FlagInput>(startable: Startable<F>, argv: string[]): Promise<boolean> {
  const {own, command} = splitAtCommand(argv, startable.flagsWithValue)
  if (own.some(arg => HELP_FLAGS.has(arg))) return false
  const parsed = await parse(own, {flags: startable.flags, strict: startable.strict}).catch(() => undefined)
  if (parsed === undefined) return false
  // oclif's Command removes it before any command runs (removeEnvVar('REDIRECTED')): so does this way.
  delete process.env.HMM_REDIRECTED
  try {
    // Its failure reported as its class reports one (ui/command.ts), then oclif's flush, as main.ts has it.
    // (parse's output is typed loosely for flags that are only known to be some FlagInput: they are startable's.)
    process.exitCode = await startable.start(parsed.flags as InferredFlags<F>, command).catch(reportError)
    await flush()
  } catch (error) {
    process.exitCode = reportError(error)
  }
  return true
}

/** Starts `hmm run ...` or `hmm exec ...` (argv[0] says which); false, having done nothing, where main.ts must answer. */
export function startMain(argv: string[]): Promise<boolean> {
  return argv[0] === 'run' ? start(RUN, argv.slice(1)) : start(EXEC, argv.slice(1))
}
