// User-facing failures. Everything the user did wrong or that went wrong in
// their world is a HmmError: one line `hmm: <message>` on stderr and an exit
// status (1 unless said otherwise). Anything else is a bug and is reported
// the same way, with the stack only under HMM_DEBUG=1.

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

export function debug(message: string): void {
  if (debugEnabled()) process.stderr.write(`hmm: debug: ${message}\n`)
}

/** Times steps for HMM_DEBUG: each lap prints the time since the last. */
export function stopwatch(): {lap(what: string): void} {
  let last = performance.now()
  return {
    lap(what) {
      const now = performance.now()
      debug(`${what} in ${Math.round(now - last)} ms`)
      last = now
    },
  }
}

/** Says something on stderr the hmm way. */
export function say(message: string): void {
  process.stderr.write(`hmm: ${message}\n`)
}

/** Says something the user should heed: yellow on a terminal. */
export function warn(message: string): void {
  process.stderr.write(`${colours(2).yellow(`hmm: ${message}`)}\n`)
}

/** The one line for an error, whatever it is. */
export function errorLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const firstLine = message.split('\n').find(line => line.trim() !== '') ?? 'unknown error'
  return firstLine.replace(/^(Error: )+/, '')
}

/** Prints the error as one line (stack under HMM_DEBUG) and returns the exit status. */
export function reportError(error: unknown): number {
  if (debugEnabled() && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`)
  const lines = error instanceof Refusal ? error.lines() : [errorLine(error)]
  for (const line of lines) process.stderr.write(`${colours(2).red(`hmm: ${line}`)}\n`)
  // Usage errors too exit 1: one status for "hmm refused", whatever refused it.
  return error instanceof HmmError ? error.exitCode : 1
}
