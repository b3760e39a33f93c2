// `hmm run`, `hmm exec` and `hmm diff` start from a bundled file of their
// own (dist/start.bundle.cjs, see scripts/bundle.js): their flags parsed by
// oclif's parser, then the command started, without oclif's Command class
// and so without its Config, which loads the manifest, looks for the shell
// and WSL, sorts the commands by locale (starting ICU), and brings a glob
// library and more into the bundle. Help, and anything the parser refuses,
// go through oclif as before: startMain answers false and bin/run.js runs
// main.ts with the same arguments.
import {flush} from '@oclif/core/flush'
import type {ArgInput, FlagInput, InferredArgs, InferredFlags} from '@oclif/core/interfaces'
import {parse} from '@oclif/core/parser'
import {DIFF, EXEC, RUN, type Startable} from './commands/startable.js'
import {reportError} from './ui/errors.js'

// As oclif's Command does once loaded: a reader of stdout that stopped (hmm diff | head) ends the output, not hmm.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
})

/** oclif shows the help for these anywhere in hmm's part of the line (helpAddition in its main.js), even as a flag's value. */
const HELP_FLAGS = new Set(['--help', '-h'])

async function start<F extends FlagInput, A extends ArgInput>(startable: Startable<F, A>, argv: string[]): Promise<boolean> {
  const {own, rest} = startable.split(argv)
  if (own.some(arg => HELP_FLAGS.has(arg))) return false
  const parsed = await parse(own, {flags: startable.flags, args: startable.args, strict: startable.strict}).catch(() => undefined)
  if (parsed === undefined) return false
  // oclif's Command removes it before any command runs (removeEnvVar('REDIRECTED')): so does this way.
  delete process.env.HMM_REDIRECTED
  try {
    // Its failure reported as its class reports one (ui/command.ts), then oclif's flush, as main.ts has it.
    // (parse's output is typed loosely for flags that are only known to be some FlagInput: they are startable's.)
    const flags = parsed.flags as InferredFlags<F>
    const args = parsed.args as InferredArgs<A>
    process.exitCode = await startable.start({flags, args}, rest).catch(reportError)
    await flush()
  } catch (error) {
    process.exitCode = reportError(error)
  }
  return true
}

/** The commands started here, by name. */
const STARTABLE = {run: RUN, exec: EXEC, diff: DIFF} as const

/** Starts `hmm run ...`, `hmm exec ...` or `hmm diff ...` (argv[0] says which); false, having done nothing, where main.ts must answer. */
export function startMain(argv: string[]): Promise<boolean> {
  const name = argv[0] as keyof typeof STARTABLE
  return start<FlagInput, ArgInput>(STARTABLE[name], argv.slice(1))
}
