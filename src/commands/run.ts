import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {RUN_FLAGS_WITH_VALUE, splitAtCommand} from '../ui/split-argv.js'

export default class Run extends HmmCommand {
  static override summary = 'Make a workspace of the working directory and run a command in it, sandboxed'
  static override description = `The workspace is a copy-on-write clone of the working directory (repository, uncommitted changes, build output). The command may write only there (and to temp dirs, caches and -w paths) and cannot read secrets. Without COMMAND runs $SHELL. Everything from COMMAND on is the command's: hmm run claude --resume -n x passes --resume -n x to claude.`
  static override usage = 'run [-d] [--rm] [-n NAME] [-w PATH]... [--net none|HOST,...] [COMMAND [ARG...]]'
  static override examples = [
    '<%= config.bin %> run -n parser claude',
    '<%= config.bin %> run --rm -w ~/.m2 make test',
    '<%= config.bin %> run --net none make test',
    '<%= config.bin %> run --net api.anthropic.com claude',
    '<%= config.bin %> run',
  ]
  static override strict = true
  static override flags = {
    name: Flags.string({char: 'n', description: "the workspace's name (letters, digits, '-', '_', '.')"}),
    write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable)', multiple: true}),
    rm: Flags.boolean({description: 'remove the workspace when the command exits'}),
    detach: Flags.boolean({char: 'd', description: 'run in the background: return at once (hmm attach, hmm peek)'}),
    net: Flags.string({
      description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
    }),
  }

  async run(): Promise<void> {
    const {own, command} = splitAtCommand(this.argv, RUN_FLAGS_WITH_VALUE)
    const {flags} = await this.parse(Run, own)
    const {runWorkspace} = await import('../app/run.js')
    process.exitCode = await runWorkspace({name: flags.name, writable: flags.write ?? [], removeAfter: flags.rm, net: flags.net, command, detach: flags.detach})
  }
}
