import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Merge extends HmmCommand {
  static override summary = "Merge a workspace's commits into the origin's branch"
  static override description = `As git merge would: fast-forward if the branch has not moved, else a merge commit "Merge workspace <label>"; conflicts are left to resolve. Only commits are merged (hmm apply takes uncommitted changes). Names the commits it takes first, and refuses, without --force, commits that change what the workspace's files do not show (hmm diff would not show it), and symbolic links that lead out of the tree. Never overwrites or removes a file the origin does not track (ignored or untracked): it names them and refuses, --force or not. The commits stay in the origin's repository as refs/hmm/<id> until the workspace is removed. Git runs on the workspace's repository only inside the sandbox.`
  static override examples = ['<%= config.bin %> merge', '<%= config.bin %> merge parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    force: Flags.boolean({description: "take commits that change what the workspace's files do not show (hmm log -p shows them), and links out of the tree"}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Merge)
    const {mergeWorkspace} = await import('../app/merge.js')
    process.exitCode = await mergeWorkspace(args.workspace, {force: flags.force})
  }
}
