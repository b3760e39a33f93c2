import {HmmCommand} from '../ui/command.js'
import {RUN} from './startable.js'

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
  static override strict = RUN.strict
  static override flags = RUN.flags

  async run(): Promise<void> {
    const {own, rest} = RUN.split(this.argv)
    const {flags, args} = await this.parse(Run, own)
    process.exitCode = await RUN.start({flags, args}, rest)
  }
}
