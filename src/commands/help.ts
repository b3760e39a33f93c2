import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'
import {HmmError} from '../ui/errors.js'
import {unknownCommand} from '../ui/suggest.js'

export default class Help extends HmmCommand {
  static override summary = 'Show help for hmm or for one of its commands'
  static override examples = ['<%= config.bin %> help', '<%= config.bin %> help exec', '<%= config.bin %> exec -h']
  static override args = {command: Args.string({description: 'the command to explain'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Help)
    if (args.command !== undefined && !this.config.findCommand(args.command)) throw new HmmError(unknownCommand(args.command, this.config.commandIDs))
    const {loadHelpClass} = await import('@oclif/core/help')
    const HelpClass = await loadHelpClass(this.config)
    await new HelpClass(this.config, this.config.pjson.oclif.helpOptions).showHelp(args.command === undefined ? [] : [args.command])
  }
}
