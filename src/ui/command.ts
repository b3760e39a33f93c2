// The base of every hmm command: errors become one `hmm: ...` line, oclif's
// usage errors in hmm's words (`hmm: unknown flag --jsn for hmm ls`).
import {Command} from '@oclif/core/command'
import {errorLine, HmmError, reportError} from './errors.js'
import {nearest} from './suggest.js'

/** oclif's parse errors (first line), said the hmm way for `hmm <command>`. */
const USAGE_ERRORS: Array<[RegExp, (match: RegExpExecArray, command: string, flags: string[]) => string]> = [
  [/^Nonexistent flags?: (.*)$/, (match, command, flags) => unknownFlag(match[1], command, flags)],
  [/^Unexpected arguments?: (.*)$/, (match, command) => `unexpected argument ${match[1]} for ${command}`],
  [/^Flag (--\S+) expects a value$/, (match, command) => `${match[1]} needs a value for ${command}`],
  [/^Missing required flag (\S+)/, (match, command) => `${command} needs --${match[1]}`],
  [/^Missing \d+ required args?:?$/, (_, command) => `${command} needs more arguments (${command} -h shows them)`],
]

/** `unknown flag --stats for hmm diff; did you mean --stat?` when one of the command's flags is near. */
function unknownFlag(given: string, command: string, flags: string[]): string {
  const first = given.split(/,\s*/)[0]
  const near = first.startsWith('--') ? nearest(first.slice(2).replace(/=.*$/, ''), flags) : undefined
  return `unknown flag ${given} for ${command}${near ? `; did you mean --${near}?` : ''}`
}

function inHmmWords(error: unknown, command: string, flags: string[]): unknown {
  if (error instanceof HmmError) return error
  const line = errorLine(error)
  for (const [pattern, say] of USAGE_ERRORS) {
    const match = pattern.exec(line)
    if (match) return new HmmError(say(match, command, flags))
  }
  return error
}

export abstract class HmmCommand extends Command {
  protected override async catch(error: Error & {exitCode?: number}): Promise<void> {
    // oclif's own exits (e.g. after --help) carry their status and print nothing.
    if ((error as {oclif?: {exit?: number}}).oclif?.exit === 0) return
    // A parse error is reported here; oclif must not also warn that parsing never happened.
    this.parsed = true
    const flags = Object.keys((this.constructor as typeof Command).flags ?? {})
    process.exitCode = reportError(inHmmWords(error, `hmm ${this.id ?? ''}`.trimEnd(), flags))
  }
}
