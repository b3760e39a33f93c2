// `hmm completion bash|zsh|fish`: scripts that ask `hmm __complete WORD...`
// (the words after `hmm`, the last the one being completed) for candidates
// and fall back to the shell's own completion (files) when there are none.

const BASH = `# hmm completion for bash: eval "$(hmm completion bash)" in ~/.bashrc
_hmm() {
  local IFS=$'\\n'
  COMPREPLY=($(hmm __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _hmm hmm
`

const ZSH = `#compdef hmm
# hmm completion for zsh: eval "$(hmm completion zsh)" in ~/.zshrc (after compinit)
_hmm() {
  local -a candidates
  candidates=("\${(@f)$(hmm __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(\${candidates:#})
  if (( \${#candidates} )); then compadd -a candidates; else _files; fi
}
compdef _hmm hmm
`

const FISH = `# hmm completion for fish: hmm completion fish > ~/.config/fish/completions/hmm.fish
function __hmm_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    hmm __complete $words[2..-1] "$current" 2>/dev/null
end
complete -c hmm -a '(__hmm_complete)'
`

export const COMPLETION_SCRIPTS = {bash: BASH, zsh: ZSH, fish: FISH}
export type Shell = keyof typeof COMPLETION_SCRIPTS
