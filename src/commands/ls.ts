import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {listing} from '../app/ls.js'

export default class Ls extends HmmCommand {
  static override summary = "List the working directory's workspaces (bare `hmm` does the same)"
  static override description =
    'Oldest first: ID, NAME, STATE (running, done, broken), AGE, WORK (what it holds as of when its last command exited: -, 2 commits, 3 files, merged, applied, pushed; ? while running) and ORIGIN. Prints nothing when there are none.'
  static override examples = ['<%= config.bin %>', '<%= config.bin %> ls -a', '<%= config.bin %> ls --json', '<%= config.bin %> ls -l']
  static override flags = {
    all: Flags.boolean({char: 'a', description: "list every directory's workspaces"}),
    json: Flags.boolean({description: 'print a JSON array (id, name, state, createdAt, origin, tree, commits, files, taken)'}),
    long: Flags.boolean({char: 'l', description: 'add SIZE: the disk space each workspace took when made'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Ls)
    process.stdout.write(listing({all: flags.all, json: flags.json, long: flags.long}))
  }
}
