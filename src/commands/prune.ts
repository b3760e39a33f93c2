import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Prune extends HmmCommand {
  static override summary = 'Remove the workspaces that hold nothing left to take back'
  static override description = `Removes the working directory's workspaces (-a: every directory's) that hmm rm would remove without -f — nothing changed, or merged, applied or pushed as they are, or broken — and that are not running, naming each. Keeps the rest without a word.`
  static override examples = ['<%= config.bin %> prune', '<%= config.bin %> prune -a']
  static override flags = {
    all: Flags.boolean({char: 'a', description: "prune every directory's workspaces"}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Prune)
    const {pruneWorkspaces} = await import('../app/prune.js')
    if (!(await pruneWorkspaces({all: flags.all}))) process.exitCode = 1
  }
}
