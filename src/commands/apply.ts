import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {splitAtPaths} from '../ui/split-argv.js'

export default class Apply extends HmmCommand {
  static override summary = "Make a workspace's changes in the origin's files"
  static override description = `Applies what hmm diff shows to the origin's files: all of it or nothing, nothing staged or committed, binary files byte for byte. Works for origins that are not git repositories. Refuses symbolic links that lead out of the tree unless --force. With --3way, what applies is applied and conflict markers are left where the origin changed the same lines (exit 1). After hmm merge of the same workspace, only what the merge did not take. After -- PATH...: only what lies under those paths (git pathspecs, relative to the working directory); the rest stays, and the workspace counts as applied once all of it was taken. The workspace is kept.`
  static override examples = [
    '<%= config.bin %> apply',
    '<%= config.bin %> apply --check parser',
    '<%= config.bin %> apply --3way parser',
    '<%= config.bin %> apply parser -- src',
  ]
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {
    check: Flags.boolean({description: 'only say whether it applies; change nothing'}),
    '3way': Flags.boolean({description: 'leave conflict markers where the origin changed the same lines, as git apply -3'}),
    force: Flags.boolean({description: 'take symbolic links that lead out of the tree (hmm diff marks them)'}),
  }

  async run(): Promise<void> {
    const {own, paths} = splitAtPaths(this.argv)
    const {args, flags} = await this.parse(Apply, own)
    const {applyWorkspace} = await import('../app/apply.js')
    process.exitCode = await applyWorkspace(args.workspace, {check: flags.check, threeWay: flags['3way'], force: flags.force, paths})
  }
}
