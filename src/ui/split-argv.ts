// `hmm run [FLAGS] COMMAND [ARG...]` (and `hmm exec [FLAGS] WS COMMAND...`):
// everything from COMMAND on is the command's, even what looks like hmm's flags (`hmm run claude --resume -n x`).
// oclif's parser does not stop at the first positional argument, so the
// split is made here, and only hmm's part is given to oclif.

/** `hmm run`'s flags that take a value in the next argument. */
export const RUN_FLAGS_WITH_VALUE = ['-n', '--name', '-w', '--write', '--net']
/** `hmm exec`'s: its first positional argument is the workspace, the command follows. */
export const EXEC_FLAGS_WITH_VALUE = ['-w', '--write', '--net']

export function splitAtCommand(argv: string[], flagsWithValue: string[]): {own: string[]; command: string[]} {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]
    if (arg === '--') return {own: argv.slice(0, index), command: argv.slice(index + 1)}
    if (!arg.startsWith('-') || arg === '-') return {own: argv.slice(0, index), command: argv.slice(index)}
    if (flagsWithValue.includes(arg)) index++
  }
  return {own: argv, command: []}
}

/** `hmm diff [FLAGS] [WS] -- PATH...` (and apply): hmm's part, and the paths after `--` (undefined without one). */
export function splitAtPaths(argv: string[]): {own: string[]; paths?: string[]} {
  const at = argv.indexOf('--')
  return at < 0 ? {own: argv} : {own: argv.slice(0, at), paths: argv.slice(at + 1)}
}
