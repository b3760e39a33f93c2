import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {EXEC_FLAGS_WITH_VALUE, splitAtCommand} from '../ui/split-argv.js'

export default class Exec extends HmmCommand {
  static override summary = 'Run a command again in an existing workspace, sandboxed as hmm run does'
  static override description = `Continues work in a workspace: the command runs in its tree under the same sandbox as hmm run (with the -w paths given then, and any given now, kept for the next time). Without COMMAND runs $SHELL. Several commands may run in one workspace at once (in the background, -d, one). Everything from COMMAND on is the command's.`
  static override usage = 'exec [-d] [-w PATH]... [--net none|HOST,...] WS [COMMAND [ARG...]]'
  static override examples = [
    '<%= config.bin %> exec parser claude --continue',
    '<%= config.bin %> exec -w ~/.m2 k3xq9a make test',
    '<%= config.bin %> exec parser',
  ]
  static override strict = false
  static override flags = {
    write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable, kept for later execs)', multiple: true}),
    detach: Flags.boolean({char: 'd', description: 'run in the background: return at once (hmm attach, hmm peek)'}),
    net: Flags.string({
      description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
    }),
  }

  async run(): Promise<void> {
    const {own, command} = splitAtCommand(this.argv, EXEC_FLAGS_WITH_VALUE)
    const {flags} = await this.parse(Exec, own)
    const {execWorkspace} = await import('../app/exec.js')
    process.exitCode = await execWorkspace({key: command[0], writable: flags.write ?? [], net: flags.net, command: command.slice(1), detach: flags.detach})
  }
}
