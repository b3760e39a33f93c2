// Whether a descriptor is a terminal, without loading node:tty where it
// cannot be one: node:tty loads node:net and the streams, the largest part
// of bare `hmm`'s start-up after Node's own. A terminal is a character
// device; only for those (a terminal, or /dev/null) is node:tty asked.
import {fstatSync} from 'node:fs'
import {createRequire} from 'node:module'
import type * as Tty from 'node:tty'

export function isTerminal(fd: number): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false
  } catch {
    return false
  }
  return (createRequire(import.meta.url)('node:tty') as typeof Tty).isatty(fd)
}
