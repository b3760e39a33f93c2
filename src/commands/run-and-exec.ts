// `hmm run`'s and `hmm exec`'s flags and their one call into app/, apart
// from their oclif classes (run.ts, exec.ts, which take them from here):
// start.ts parses and starts the two from a bundle of their own, without
// oclif's Command, and so without its Config and all it loads.
import * as Flags from '@oclif/core/flags'
import type {FlagInput, InferredFlags} from '@oclif/core/interfaces'
import {EXEC_FLAGS_WITH_VALUE, RUN_FLAGS_WITH_VALUE} from '../ui/split-argv.js'

const runFlags = {
  name: Flags.string({char: 'n', description: "the workspace's name (letters, digits, '-', '_', '.')"}),
  write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable)', multiple: true}),
  rm: Flags.boolean({description: 'remove the workspace when the command exits'}),
  detach: Flags.boolean({char: 'd', description: 'run in the background: return at once (hmm attach, hmm peek)'}),
  net: Flags.string({
    description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
  }),
}

const execFlags = {
  write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable, kept for later execs)', multiple: true}),
  detach: Flags.boolean({char: 'd', description: 'run in the background: return at once (hmm attach, hmm peek)'}),
  net: Flags.string({
    description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
  }),
}

/**
 * One of the two: its flags and whether it refuses arguments oclif's parser
 * does not expect (oclif's `strict`); the flags that take a value, before
 * the command (ui/split-argv.ts); what it does once parsed, to its exit status.
 */
export interface Startable<F extends FlagInput> {
  flags: F
  strict: boolean
  flagsWithValue: string[]
  start(flags: InferredFlags<F>, command: string[]): Promise<number>
}

export const RUN: Startable<typeof runFlags> = {
  flags: runFlags,
  strict: true,
  flagsWithValue: RUN_FLAGS_WITH_VALUE,
  async start(flags, command) {
    const {runWorkspace} = await import('../app/run.js')
    return runWorkspace({name: flags.name, writable: flags.write ?? [], removeAfter: flags.rm, net: flags.net, command, detach: flags.detach})
  },
}

/** exec's first argument is the workspace, and its command follows. */
export const EXEC: Startable<typeof execFlags> = {
  flags: execFlags,
  strict: false,
  flagsWithValue: EXEC_FLAGS_WITH_VALUE,
  async start(flags, command) {
    const {execWorkspace} = await import('../app/exec.js')
    return execWorkspace({key: command[0], writable: flags.write ?? [], net: flags.net, command: command.slice(1), detach: flags.detach})
  },
}
