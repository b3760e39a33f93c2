import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'
import {HmmError} from '../ui/errors.js'

export default class Stop extends HmmCommand {
  static override summary = 'Stop workspaces'
  static override description = `Ends every process running in each workspace given (name, ID or the start of one), including those the command left in the background: SIGTERM, then SIGKILL after 5 seconds. Waits for them to end.`
  static override examples = ['<%= config.bin %> stop parser', '<%= config.bin %> stop k3xq9a p7m']
  static override strict = false
  static override args = {workspaces: Args.string({description: 'workspaces to stop'})}

  async run(): Promise<void> {
    const {argv} = await this.parse(Stop)
    const keys = argv as string[]
    if (keys.length === 0) throw new HmmError('stop needs the workspaces to stop')
    const {stopWorkspaces} = await import('../app/stop.js')
    if (!stopWorkspaces(keys)) process.exitCode = 1
  }
}
