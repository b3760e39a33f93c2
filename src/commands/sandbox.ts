import * as Flags from '@oclif/core/flags'
import {HmmCommand} from '../ui/command.js'
import {splitAtCommand} from '../ui/split-argv.js'

const SANDBOX_FLAGS_WITH_VALUE = ['-w', '--write', '--platform', '--net']

export default class Sandbox extends HmmCommand {
  static override summary = 'Print the sandbox `hmm run` would apply in the working directory'
  static override description =
    "Shows the paths the command may write, the paths it may not read, and how the platform enforces it: on Linux the helper's Landlock arguments, on macOS the Seatbelt profile and its -D parameters. Changes nothing."
  static override usage = 'sandbox [-w PATH]... [--platform linux|darwin] [--net none|HOST,...] [-- COMMAND [ARG...]]'
  static override examples = [
    '<%= config.bin %> sandbox',
    '<%= config.bin %> sandbox -w ~/.m2 --platform darwin',
    '<%= config.bin %> sandbox --net none',
    '<%= config.bin %> sandbox -- claude',
  ]
  static override flags = {
    write: Flags.string({char: 'w', description: 'also let the command write PATH (repeatable)', multiple: true}),
    platform: Flags.string({description: 'render for this platform', options: ['linux', 'darwin']}),
    net: Flags.string({
      description: "the command's network: none (loopback only), only HTTP(S) to HOST[,HOST...] through hmm's proxy, or profile (its agent's hosts)",
    }),
  }

  async run(): Promise<void> {
    // As for run: everything after -- is the command whose sandbox is shown (its agent profile applies).
    const {own, command} = splitAtCommand(this.argv, SANDBOX_FLAGS_WITH_VALUE)
    const {flags} = await this.parse(Sandbox, own)
    const {describeSandbox} = await import('../app/sandbox.js')
    process.stdout.write(describeSandbox({platform: flags.platform as 'linux' | 'darwin' | undefined, writable: flags.write ?? [], net: flags.net, command}))
  }
}
