import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Peek extends HmmCommand {
  static override summary = 'Print the last of what a background run wrote, without attaching'
  static override description = `The last screen (24 lines), or the last N lines, of what the command of hmm run -d wrote, as plain text: control characters and escape sequences are shown (ESC as ^[), not acted on. Also after the command ended.`
  static override examples = ['<%= config.bin %> peek parser', '<%= config.bin %> peek -n 100 parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}
  static override flags = {lines: Flags.integer({char: 'n', description: 'the last N lines'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Peek)
    const {peekWorkspace} = await import('../app/peek.js')
    process.stdout.write(peekWorkspace(args.workspace, flags.lines))
  }
}
