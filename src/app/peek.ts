// `hmm peek WS [-n N]`: the last of what a background run's command wrote,
// as plain text (SPEC "Background runs"). The scrollback is the command's
// bytes as they came (native-helpers/background.c): nothing of it is
// interpreted; each control character is shown in caret notation (ESC as
// ^[), so what is printed cannot act on the user's terminal.
import {closeSync, existsSync, fstatSync, openSync, readSync} from 'node:fs'
import {join} from 'node:path'
import {HmmError} from '../ui/errors.js'
import {shownAsCodePoint} from '../ui/format.js'
import {Context} from '../workspaces/context.js'

/** The lines of a screen, where -n is not given: the size a background run's pty has until someone attaches. */
export const SCREEN_LINES = 24
/** The most of the scrollback read: enough for any screen's lines. */
const TAIL_BYTES = 256 * 1024

function tail(file: string): Buffer {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    const length = Math.min(size, TAIL_BYTES)
    const buffer = Buffer.alloc(length)
    readSync(fd, buffer, 0, length, size - length)
    return buffer
  } finally {
    closeSync(fd)
  }
}

/** A line of the command's output with its controls shown, never acted on (a tab stays a tab). */
export function shownLine(line: string): string {
  // eslint-disable-next-line no-control-regex -- showing control characters is the point
  return line.replace(/[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u007f]/gu, character => {
    const code = character.codePointAt(0)!
    if (code === 0x7f) return '^?'
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`
    return shownAsCodePoint(character) ?? character
  })
}

/** The last `lines` lines of what the command wrote, made printable. */
export function peekText(output: Buffer, lines: number): string {
  const all = output.toString('utf8').replace(/\r+\n/g, '\n').split('\n')
  if (all.at(-1) === '') all.pop()
  return all
    .slice(-lines)
    .map(line => `${shownLine(line)}\n`)
    .join('')
}

export function peekWorkspace(key: string | undefined, lines: number | undefined): string {
  if (lines !== undefined && (!Number.isInteger(lines) || lines < 1)) throw new HmmError(`-n needs a number of lines, 1 or more: ${lines}`)
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const output = join(workspace.background, 'output')
    if (!existsSync(output)) throw new HmmError(`workspace ${workspace.label} was not run in the background (hmm run -d)`)
    return peekText(tail(output), lines ?? SCREEN_LINES)
  } finally {
    context.close()
  }
}
