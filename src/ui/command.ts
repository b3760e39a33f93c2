// The base of every hmm command: errors become one `hmm: ...` line, oclif's
// usage errors in hmm's words (`hmm: unknown flag --jsn for hmm ls`).
import {Command} from '@oclif/core/command'
import {errorLine, HmmError, reportError} from './errors.js'

/** oclif's parse errors (first line), said the hmm way for `hmm <command>`. */
const USAGE_ERRORS: Array<[RegExp, (match: RegExpExecArray, command: string) => string]> = [
  [/^Nonexistent flags?: (.*)$/, (match, command) => `unknown flag ${match[1]} for ${command}`],
  [/^Unexpected arguments?: (.*)$/, (match, command) => `unexpected argument ${match[1]} for ${command}`],
  [/^Flag (--\S+) expects a value$/, (match, command) => `${match[1]} needs a value for ${command}`],
  [/^Missing required flag (\S+)/, (match, command) => `${command} needs --${match[1]}`],
  [/^Missing \d+ required args?:?$/, (_, command) => `${command} needs more arguments (${command} -h shows them)`],
]

function inHmmWords(error: unknown, command: string): unknown {
  if (error instanceof HmmError) return error
  const line = errorLine(error)
  for (const [pattern, say] of USAGE_ERRORS) {
    const match = pattern.exec(line)
    if (match) return new HmmError(say(match, command))
  }
  return error
}

export abstract class HmmCommand extends Command {
  protected override async catch(error: Error & {exitCode?: number}): Promise<void> {
    // oclif's own exits (e.g. after --help) carry their status and print nothing.
    if ((error as {oclif?: {exit?: number}}).oclif?.exit === 0) return
    // A parse error is reported here; oclif must not also warn that parsing never happened.
    this.parsed = true
    process.exitCode = reportError(inHmmWords(error, `hmm ${this.id ?? ''}`.trimEnd()))
  }
}
