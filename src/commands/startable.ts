// The commands bin/run.js starts from a bundle of their own (start.ts):
// `hmm run`, `hmm exec` and `hmm diff`, their flags and their one call into
// app/, apart from their oclif classes (run.ts, exec.ts, diff.ts, which take
// them from here). start.ts parses them with oclif's parser only, without
// oclif's Command, and so without its Config and all it loads.
import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {ArgInput, FlagInput, InferredArgs, InferredFlags} from '@oclif/core/interfaces'
import {EXEC_FLAGS_WITH_VALUE, RUN_FLAGS_WITH_VALUE, splitAtCommand, splitAtPaths} from '../ui/split-argv.js'

/** What run and exec both take, said the same. */
const commandFlags = () => ({
  detach: Flags.boolean({char: 'd', description: 'run in the background: return at once (hmm attach, hmm peek)'}),
  net: Flags.string({
    description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
  }),
})

const runFlags = {
  name: Flags.string({char: 'n', description: "the workspace's name (letters, digits, '-', '_', '.')"}),
  write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable)', multiple: true}),
  rm: Flags.boolean({description: 'remove the workspace when the command exits'}),
  ...commandFlags(),
}

const execFlags = {
  write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable, kept for later execs)', multiple: true}),
  ...commandFlags(),
}

const diffFlags = {
  stat: Flags.boolean({description: "git's stat summary only"}),
}

const diffArgs = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}

/**
 * One of them: its flags and arguments, and whether it refuses arguments
 * oclif's parser does not expect (oclif's `strict`); how its command line
 * splits into hmm's part, which the parser reads, and what follows as is
 * (run's command, diff's paths; ui/split-argv.ts); what it does once
 * parsed, to its exit status.
 */
export interface Startable<F extends FlagInput, A extends ArgInput> {
  flags: F
  args: A
  strict: boolean
  split(argv: string[]): {own: string[]; rest?: string[]}
  start(parsed: {flags: InferredFlags<F>; args: InferredArgs<A>}, rest: string[] | undefined): Promise<number>
}

/** hmm's part of a command line that runs a command, and the command (ui/split-argv.ts). */
const atCommand = (flagsWithValue: string[]) => (argv: string[]) => {
  const {own, command} = splitAtCommand(argv, flagsWithValue)
  return {own, rest: command}
}

export const RUN: Startable<typeof runFlags, Record<string, never>> = {
  flags: runFlags,
  args: {},
  strict: true,
  split: atCommand(RUN_FLAGS_WITH_VALUE),
  async start({flags}, command = []) {
    const {runWorkspace} = await import('../app/run.js')
    return runWorkspace({name: flags.name, writable: flags.write ?? [], removeAfter: flags.rm, net: flags.net, command, detach: flags.detach})
  },
}

/** exec's first argument is the workspace, and its command follows. */
export const EXEC: Startable<typeof execFlags, Record<string, never>> = {
  flags: execFlags,
  args: {},
  strict: false,
  split: atCommand(EXEC_FLAGS_WITH_VALUE),
  async start({flags}, command = []) {
    const {execWorkspace} = await import('../app/exec.js')
    return execWorkspace({key: command[0], writable: flags.write ?? [], net: flags.net, command: command.slice(1), detach: flags.detach})
  },
}

/** diff's paths follow `--`. */
export const DIFF: Startable<typeof diffFlags, typeof diffArgs> = {
  flags: diffFlags,
  args: diffArgs,
  strict: true,
  split: argv => {
    const {own, paths} = splitAtPaths(argv)
    return {own, rest: paths}
  },
  async start({flags, args}, paths) {
    const {diffWorkspace} = await import('../app/diff.js')
    await diffWorkspace(args.workspace, {stat: flags.stat, paths})
    return 0
  },
}
