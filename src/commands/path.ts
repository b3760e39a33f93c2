import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'

export default class Path extends HmmCommand {
  static override summary = "Print a workspace's tree path"
  static override description =
    "The directory the command runs in, on stdout. git run there outside hmm (by you, a shell prompt or an editor) runs what the workspace's .git/config says, unconfined: work in a workspace with hmm exec, look at it with hmm diff and hmm log."
  static override examples = ['<%= config.bin %> path parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Path)
    const {workspacePath} = await import('../app/path.js')
    process.stdout.write(workspacePath(args.workspace))
  }
}
