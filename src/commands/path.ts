import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'

export default class Path extends HmmCommand {
  static override summary = "Print a workspace's tree path"
  static override description = 'The directory the command runs in, on stdout, for cd "$(hmm path parser)".'
  static override examples = ['<%= config.bin %> path parser', 'cd "$(<%= config.bin %> path)"']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Path)
    const {workspacePath} = await import('../app/path.js')
    process.stdout.write(workspacePath(args.workspace))
  }
}
