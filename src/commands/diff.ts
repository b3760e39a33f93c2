import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {splitAtPaths} from '../ui/split-argv.js'

export default class Diff extends HmmCommand {
  static override summary = 'Show what changed in a workspace since it was made, as a git patch'
  static override description = `Committed and uncommitted changes alike, from what the origin was when the workspace was made to the workspace's files now. Leaves out what git ignores, what was already uncommitted in the origin then, and what changed in the origin since. Works while the command runs, and for origins that are not git repositories. After -- PATH...: only what lies under those paths (git pathspecs, relative to the working directory). On a terminal, paged and coloured as your git would.`
  static override examples = [
    '<%= config.bin %> diff',
    '<%= config.bin %> diff --stat parser',
    '<%= config.bin %> diff k3xq9a > work.patch',
    '<%= config.bin %> diff parser -- src tests',
  ]
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    stat: Flags.boolean({description: "git's stat summary only"}),
  }

  async run(): Promise<void> {
    const {own, paths} = splitAtPaths(this.argv)
    const {args, flags} = await this.parse(Diff, own)
    const {diffWorkspace} = await import('../app/diff.js')
    await diffWorkspace(args.workspace, {stat: flags.stat, paths})
  }
}
