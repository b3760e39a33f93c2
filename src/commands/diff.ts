import {HmmCommand} from '../ui/command.js'
import {DIFF} from './startable.js'

export default class Diff extends HmmCommand {
  static override summary = 'Show what changed in a workspace since it was made, as a git patch'
  static override description = `Committed and uncommitted changes alike, from what the origin was when the workspace was made to the workspace's files now. Leaves out what git ignores, what was already uncommitted in the origin then, and what changed in the origin since. Works while the command runs, and for origins that are not git repositories. After -- PATH...: only what lies under those paths (git pathspecs, relative to the working directory). On a terminal, paged and coloured as your git would.`
  static override examples = [
    '<%= config.bin %> diff',
    '<%= config.bin %> diff --stat parser',
    '<%= config.bin %> diff k3xq9a > work.patch',
    '<%= config.bin %> diff parser -- src tests',
  ]
  static override args = DIFF.args
  static override flags = DIFF.flags

  async run(): Promise<void> {
    const {own, rest} = DIFF.split(this.argv)
    const {flags, args} = await this.parse(Diff, own)
    process.exitCode = await DIFF.start({flags, args}, rest)
  }
}
