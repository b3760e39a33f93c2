import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'

export default class Attach extends HmmCommand {
  static override summary = "Connect your terminal to a background run's (hmm run -d)"
  static override description = `Input, output, resizes and Ctrl-C pass through as in hmm run. Ctrl-] detaches and leaves the command running. One terminal at a time.`
  static override examples = ['<%= config.bin %> attach parser']
  static override args = {workspace: Args.string({description: 'name, ID or start of an ID (default: the latest here)'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Attach)
    const {attachWorkspace} = await import('../app/attach.js')
    process.exitCode = await attachWorkspace(args.workspace)
  }
}
