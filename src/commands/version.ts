import {HmmCommand} from '../ui/command.js'

export default class Version extends HmmCommand {
  static override summary = "Print hmm's version (as hmm --version does)"
  static override examples = ['<%= config.bin %> version']

  async run(): Promise<void> {
    await this.parse(Version)
    // The command's name, not the package's (main.ts).
    process.stdout.write(`${this.config.userAgent}\n`)
  }
}
