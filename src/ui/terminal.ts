// Whether a descriptor is a terminal, without loading node:tty where it
// cannot be one: node:tty loads node:net and the streams, the largest part
// of bare `hmm`'s start-up after Node's own. A terminal is a character
// device; only for those (a terminal, or /dev/null) is node:tty asked.
import {fstatSync} from 'node:fs'

export function isTerminal(fd: number): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false
  } catch {
    return false
  }
  return process.getBuiltinModule('node:tty').isatty(fd)
}
