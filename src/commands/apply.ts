import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Apply extends HmmCommand {
  static override summary = "Make a workspace's changes in the origin's files"
  static override description = `Applies what hmm diff shows to the origin's files: all of it or nothing, nothing staged or committed, binary files byte for byte. Works for origins that are not git repositories. The workspace is kept.`
  static override examples = ['<%= config.bin %> apply', '<%= config.bin %> apply --check parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    check: Flags.boolean({description: 'only say whether it applies; change nothing'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Apply)
    const {applyWorkspace} = await import('../app/apply.js')
    process.exitCode = await applyWorkspace(args.workspace, {check: flags.check})
  }
}
