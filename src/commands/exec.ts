import {HmmCommand} from '../ui/command.js'
import {EXEC} from './startable.js'

export default class Exec extends HmmCommand {
  static override summary = 'Run a command again in an existing workspace, sandboxed as hmm run does'
  static override description = `Continues work in a workspace: the command runs in its tree under the same sandbox as hmm run (with the -w paths given then, and any given now, kept for the next time). Without COMMAND runs $SHELL. Several commands may run in one workspace at once (in the background, -d, one). Everything from COMMAND on is the command's.`
  static override usage = 'exec [-d] [-w PATH]... [--net none|HOST,...] WS [COMMAND [ARG...]]'
  static override examples = [
    '<%= config.bin %> exec parser claude --continue',
    '<%= config.bin %> exec -w ~/.m2 k3xq9a make test',
    '<%= config.bin %> exec parser',
  ]
  static override strict = EXEC.strict
  static override flags = EXEC.flags

  async run(): Promise<void> {
    const {own, rest} = EXEC.split(this.argv)
    const {flags, args} = await this.parse(Exec, own)
    process.exitCode = await EXEC.start({flags, args}, rest)
  }
}
