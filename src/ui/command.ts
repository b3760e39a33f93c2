// The base of every hmm command: errors become one `hmm: ...` line.
import {Command} from '@oclif/core/command'
import {reportError} from './errors.js'

export abstract class HmmCommand extends Command {
  protected override async catch(error: Error & {exitCode?: number}): Promise<void> {
    // oclif's own exits (e.g. after --help) carry their status and print nothing.
    if ((error as {oclif?: {exit?: number}}).oclif?.exit === 0) return
    // A parse error is reported here; oclif must not also warn that parsing never happened.
    this.parsed = true
    process.exitCode = reportError(error)
  }
}
