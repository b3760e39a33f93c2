import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Log extends HmmCommand {
  static override summary = 'List the commits hmm merge and hmm pr would take from a workspace'
  static override description = `Newest first, one line each as git log --oneline (-p: with their patches), taken out of the workspace as merge takes them: git runs on the workspace's repository only inside the sandbox. Nothing to take: no output. Works while the command runs.`
  static override examples = ['<%= config.bin %> log', '<%= config.bin %> log -p parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    patch: Flags.boolean({char: 'p', description: 'with their patches'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Log)
    const {logWorkspace} = await import('../app/log.js')
    await logWorkspace(args.workspace, {patch: flags.patch})
  }
}
