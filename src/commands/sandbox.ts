import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'

export default class Sandbox extends HmmCommand {
  static override summary = 'Print the sandbox `hmm run` would apply in the working directory'
  static override description =
    "Shows the paths the command may write, the paths it may not read, and how the platform enforces it: on Linux the helper's Landlock arguments, on macOS the Seatbelt profile and its -D parameters. Changes nothing."
  static override examples = ['<%= config.bin %> sandbox', '<%= config.bin %> sandbox -w ~/.m2 --platform darwin']
  static override flags = {
    write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable)', multiple: true}),
    platform: Flags.string({description: 'render for this platform', options: ['linux', 'darwin']}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Sandbox)
    const {describeSandbox} = await import('../app/sandbox.js')
    process.stdout.write(describeSandbox({platform: flags.platform as 'linux' | 'darwin' | undefined, writable: flags.write ?? []}))
  }
}
