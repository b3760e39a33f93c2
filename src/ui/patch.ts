// A patch as shown on a terminal. Its content is the command's: a file may
// hold escape sequences that erase the lines above (hiding a hunk), conceal
// a line, or write the clipboard, and bidirectional overrides that make
// code read otherwise than it runs. So the content's control characters,
// C1 controls and bidi overrides are made visible (`^[`, `<U+202E>`), and
// hmm colours the patch itself, from the user's `color.diff.*` settings as
// git would (git's own colouring passes the content's sequences through).
import {shownAsCodePoint} from './format.js'

/** The SGR sequence of each part of a patch; '' where it is not coloured. */
export interface PatchColours {
  context: string
  meta: string
  frag: string
  func: string
  old: string
  new: string
}

/** git's defaults. */
const DEFAULTS: Record<keyof PatchColours, string> = {context: '', meta: 'bold', frag: 'cyan', func: '', old: 'red', new: 'green'}
const RESET = '\x1b[m'
const COLOURS = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white']
const ATTRIBUTES: Record<string, number> = {bold: 1, dim: 2, italic: 3, ul: 4, blink: 5, reverse: 7, strike: 9}
const NO_ATTRIBUTES: Record<string, number> = {bold: 22, dim: 22, italic: 23, ul: 24, blink: 25, reverse: 27, strike: 29}

/** One colour word as an SGR parameter (base 30: foreground, 40: background); '' for normal, undefined if unknown. */
function colourParameter(word: string, base: number): string | undefined {
  if (word === 'normal') return ''
  if (word === 'default') return String(base + 9)
  const index = COLOURS.indexOf(word.replace(/^bright/, ''))
  if (index >= 0) return String(base + index + (word.startsWith('bright') ? 60 : 0))
  if (/^\d{1,3}$/.test(word) && Number(word) < 256) return `${base + 8};5;${word}`
  const rgb = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/.exec(word)
  if (rgb)
    return `${base + 8};2;${rgb
      .slice(1)
      .map(hex => parseInt(hex, 16))
      .join(';')}`
  return undefined
}

/** A git colour value (`green bold`, `#ff0000 ul`, `normal`) as an SGR sequence; undefined if git would not read it. */
export function sgr(value: string): string | undefined {
  const attributes: number[] = []
  const colours: string[] = []
  for (const word of value.toLowerCase().split(/\s+/).filter(Boolean)) {
    const negated = /^no-?(.*)$/.exec(word)?.[1]
    if (word in ATTRIBUTES) attributes.push(ATTRIBUTES[word])
    else if (negated !== undefined && negated in NO_ATTRIBUTES) attributes.push(NO_ATTRIBUTES[negated])
    else {
      if (colours.length === 2) return undefined
      const parameter = colourParameter(word, colours.length === 0 ? 30 : 40)
      if (parameter === undefined) return undefined
      colours.push(parameter)
    }
  }
  const parameters = [...attributes.map(String), ...colours.filter(Boolean)]
  return parameters.length > 0 ? `\x1b[${parameters.join(';')}m` : ''
}

/** The colours from the user's settings, as `-c color.diff.<slot>=<value>` arguments (git/pager.ts). */
export function patchColours(settings: string[]): PatchColours {
  const given = new Map<string, string>()
  for (const setting of settings) {
    const match = /^color\.diff\.(\w+)=(.*)$/i.exec(setting)
    if (match) given.set(match[1].toLowerCase() === 'plain' ? 'context' : match[1].toLowerCase(), match[2])
  }
  const colours = {} as PatchColours
  for (const slot of Object.keys(DEFAULTS) as (keyof PatchColours)[]) {
    colours[slot] = sgr(given.get(slot) ?? DEFAULTS[slot]) ?? sgr(DEFAULTS[slot])!
  }
  return colours
}

/** The character whose UTF-8 form starts at `at`, and its length in bytes; undefined where no valid one starts. */
function utf8At(bytes: Buffer, at: number): {character: string; length: number} | undefined {
  const lead = bytes[at]
  const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0
  if (length === 0 || at + length > bytes.length) return undefined
  let code = lead & (0xff >> (length + 1))
  for (let next = at + 1; next < at + length; next++) {
    if ((bytes[next] & 0xc0) !== 0x80) return undefined
    code = (code << 6) | (bytes[next] & 0x3f)
  }
  // Overlong forms, surrogates and what lies beyond Unicode are no character: their bytes pass as they are.
  if ((length === 3 && code < 0x800) || (length === 4 && (code < 0x10000 || code > 0x10ffff)) || (code >= 0xd800 && code <= 0xdfff)) return undefined
  return {character: String.fromCodePoint(code), length}
}

/**
 * The bytes with every control character (but tab and newline) shown as
 * `^[`, and every C1 control, bidirectional control and other invisible
 * format character as `<U+202E>` (ui/format.ts's shownAsCodePoint), instead
 * of acted on. Bytes that are not UTF-8 pass as they are.
 */
export function visibleBytes(bytes: Buffer): Buffer {
  const parts: (Buffer | string)[] = []
  let start = 0
  const replace = (at: number, length: number, text: string) => {
    parts.push(bytes.subarray(start, at), text)
    start = at + length
  }
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a) || byte === 0x7f) replace(i, 1, byte === 0x7f ? '^?' : `^${String.fromCharCode(byte + 0x40)}`)
    else if (byte >= 0x80) {
      const decoded = utf8At(bytes, i)
      if (!decoded) continue
      const shown = shownAsCodePoint(decoded.character)
      if (shown) replace(i, decoded.length, shown)
      i += decoded.length - 1
    }
  }
  if (start === 0) return bytes
  parts.push(bytes.subarray(start))
  return Buffer.concat(parts.map(part => (typeof part === 'string' ? Buffer.from(part) : part)))
}

const startsWith = (line: Buffer, text: string) => line.subarray(0, text.length).toString('latin1') === text

/** A patch (git diff or git log -p, uncoloured) made safe for a terminal, and coloured if colours are given. */
export function patchForTerminal(patch: Buffer, colours: PatchColours | undefined): Buffer {
  const out: Buffer[] = []
  const paint = (colour: string, text: Buffer) => (colour && text.length > 0 ? [Buffer.from(colour), text, Buffer.from(RESET)] : [text])
  // Where in the patch a line is: before a file (hmm log's line of a commit), a file's header, or a hunk.
  let part: 'commit' | 'file' | 'hunk' = 'commit'
  let from = 0
  while (from < patch.length) {
    const newline = patch.indexOf(0x0a, from)
    const end = newline < 0 ? patch.length : newline
    const line = visibleBytes(patch.subarray(from, end))
    from = end + 1
    if (startsWith(line, 'diff ')) part = 'file'
    else if (startsWith(line, '@@')) part = 'hunk'
    if (!colours) out.push(line)
    else if (part === 'file') out.push(...paint(colours.meta, line))
    else if (part === 'hunk' && startsWith(line, '@@')) {
      const close = line.indexOf('@@', 2)
      const frag = close < 0 ? line.length : close + 2
      out.push(...paint(colours.frag, line.subarray(0, frag)), ...paint(colours.func, line.subarray(frag)))
    } else if (part === 'hunk' && (line[0] === 0x2b || line[0] === 0x2d)) {
      const colour = line[0] === 0x2b ? colours.new : colours.old
      out.push(...paint(colour, line.subarray(0, 1)), ...paint(colour, line.subarray(1)))
    } else out.push(...paint(part === 'hunk' ? colours.context : '', line))
    if (newline >= 0) out.push(Buffer.from('\n'))
  }
  return Buffer.concat(out)
}
