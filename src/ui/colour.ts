// Colour, with chalk, only on a terminal and never with NO_COLOR set (SPEC
// "Output conventions"): decided per stream, by hmm rather than by chalk's
// own guess (which FORCE_COLOR and CI variables sway).
import {Chalk, type ChalkInstance} from 'chalk'
import {isTerminal} from './terminal.js'

const decided = new Map<number, ChalkInstance>()

/** Chalk for what hmm writes on a descriptor (1: stdout, 2: stderr): plain unless it is a terminal and NO_COLOR is unset or empty. */
export function colours(fd: 1 | 2): ChalkInstance {
  let chalk = decided.get(fd)
  if (!chalk) {
    chalk = new Chalk({level: !process.env.NO_COLOR && isTerminal(fd) ? 1 : 0})
    decided.set(fd, chalk)
  }
  return chalk
}
