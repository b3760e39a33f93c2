import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Pr extends HmmCommand {
  static override summary = "Push a workspace's commits and open a GitHub pull request"
  static override description = `Pushes the workspace's commits to the branch hmm/<name> (or hmm/<id>) of the remote the origin's branch tracks (or origin), with your own credentials, and opens a pull request into the tracked branch with gh, printing its URL (an existing one is found and printed). Run again, it updates the branch only if it is as hmm last pushed it. Without gh, prints the compare URL; for a remote not on GitHub, only pushes. The origin's branch and files are left as they are. Names the commits first, and refuses, without --force, commits that change what the workspace's files do not show.`
  static override examples = ['<%= config.bin %> pr', '<%= config.bin %> pr --draft parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    draft: Flags.boolean({description: 'open the pull request as a draft'}),
    force: Flags.boolean({description: "push commits that change what the workspace's files do not show (hmm log -p shows them)"}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Pr)
    const {prWorkspace} = await import('../app/pr.js')
    process.exitCode = await prWorkspace(args.workspace, {draft: flags.draft, force: flags.force})
  }
}
