import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {HmmError} from '../ui/errors.js'

export default class Rm extends HmmCommand {
  static override summary = 'Remove workspaces'
  static override description = `Removes each workspace given (name, ID or the start of one), everything in it, and the refs/hmm/<id> it left in the origin's repository. A workspace holding work that was never merged, applied or pushed is kept unless -f is given; a running one is never removed.`
  static override examples = ['<%= config.bin %> rm parser', '<%= config.bin %> rm -f k3xq9a p7m']
  static override strict = false
  static override args = {workspaces: Args.string({description: 'workspaces to remove'})}
  static override flags = {
    force: Flags.boolean({char: 'f', description: 'remove even if it holds work never taken back'}),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Rm)
    const keys = argv as string[]
    if (keys.length === 0) throw new HmmError('rm needs the workspaces to remove')
    const {removeWorkspaces} = await import('../app/rm.js')
    if (!(await removeWorkspaces(keys, flags.force))) process.exitCode = 1
  }
}
