// User-facing failures. Everything the user did wrong or that went wrong in
// their world is a HmmError: one line `hmm: <message>` on stderr and an exit
// status (1 unless said otherwise). Anything else is a bug and is reported
// the same way, with the stack only under HMM_DEBUG=1.
//
// Security: messages name what the command made (file names, commit
// subjects, git's lines about them), and so may hold escape sequences and
// bidirectional controls. Every message written here goes through
// printable() (ui/format.ts) on its way out, so no call site can forget it:
// a message is one line (a newline in a name is shown as `?`, it cannot
// start a line of its own). printable() leaves printable text as it is, so
// text a call site made printable first is not changed again.

import {colours} from './colour.js'
import {printable} from './format.js'

export class HmmError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = 'HmmError'
  }
}

/** A path refused, and why (`ignored in <origin> and present there`). */
export interface RefusedPath {
  path: string
  reason: string
}

/**
 * A refusal that names its paths (SPEC "Refusals"): the message, then one
 * line per path with its reason, then what resolves it. The paths are the
 * command's, printed printable.
 */
export class Refusal extends HmmError {
  constructor(
    message: string,
    readonly paths: RefusedPath[],
    readonly resolution: string,
  ) {
    super(message)
  }

  lines(): string[] {
    return [`${this.message}:`, ...this.paths.map(({path, reason}) => `  ${printable(path)}: ${reason}`), this.resolution]
  }
}

export function debugEnabled(): boolean {
  return process.env.HMM_DEBUG === '1'
}

/** Each line of the text made printable, the lines kept apart. */
function shown(text: string): string {
  return text.split('\n').map(printable).join('\n')
}

export function debug(message: string): void {
  if (debugEnabled()) process.stderr.write(`hmm: debug: ${shown(message)}\n`)
}

/** A step for HMM_DEBUG, with the time since the process started: where a command's time goes. */
export function debugStep(what: string): void {
  // Not asked for, the clock is not read: Node loads perf_hooks (a millisecond) at the first look at it.
  if (debugEnabled()) debug(`${what} at ${Math.round(performance.now())} ms`)
}

/** Times steps for HMM_DEBUG: each lap prints the time since the last. */
export function stopwatch(): {lap(what: string): void} {
  if (!debugEnabled()) return {lap() {}}
  let last = performance.now()
  return {
    lap(what) {
      const now = performance.now()
      debug(`${what} in ${Math.round(now - last)} ms`)
      last = now
    },
  }
}

/** Says something on stderr the hmm way: one line. */
export function say(message: string): void {
  process.stderr.write(`hmm: ${printable(message)}\n`)
}

/** Says something the user should heed: yellow on a terminal. */
export function warn(message: string): void {
  process.stderr.write(`${colours(2).yellow(`hmm: ${printable(message)}`)}\n`)
}

/** The one line for an error, whatever it is: a HmmError's whole message (one line, a newline in a name shown as `?`), else the first line. */
export function errorLine(error: unknown): string {
  if (error instanceof HmmError && error.message.trim() !== '') return printable(error.message)
  const message = error instanceof Error ? error.message : String(error)
  const firstLine = message.split('\n').find(line => line.trim() !== '') ?? 'unknown error'
  return printable(firstLine.replace(/^(Error: )+/, ''))
}

/** Prints the error as one line (stack under HMM_DEBUG) and returns the exit status. */
export function reportError(error: unknown): number {
  if (debugEnabled() && error instanceof Error && error.stack) process.stderr.write(`${shown(error.stack)}\n`)
  // A refusal is a block, one printable line each (its paths are made printable in lines()); anything else one line.
  const lines = error instanceof Refusal ? error.lines().map(printable) : [errorLine(error)]
  for (const line of lines) process.stderr.write(`${colours(2).red(`hmm: ${line}`)}\n`)
  // Usage errors too exit 1: one status for "hmm refused", whatever refused it.
  return error instanceof HmmError ? error.exitCode : 1
}
