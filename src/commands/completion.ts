import * as Args from '@oclif/core/args'
import {HmmCommand} from '../ui/command.js'

export default class Completion extends HmmCommand {
  static override summary = 'Print a shell completion script (commands, flags, workspace names and IDs)'
  static override description =
    'bash: eval "$(hmm completion bash)" in ~/.bashrc; zsh: eval "$(hmm completion zsh)" in ~/.zshrc after compinit; fish: hmm completion fish > ~/.config/fish/completions/hmm.fish'
  static override examples = ['<%= config.bin %> completion bash', '<%= config.bin %> completion fish > ~/.config/fish/completions/hmm.fish']
  static override args = {shell: Args.string({description: 'the shell', options: ['bash', 'zsh', 'fish'], required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(Completion)
    const {COMPLETION_SCRIPTS} = await import('../app/completion-scripts.js')
    process.stdout.write(COMPLETION_SCRIPTS[args.shell as keyof typeof COMPLETION_SCRIPTS])
  }
}
