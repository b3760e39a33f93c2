// Small formatting helpers for listings: ~ paths, ages, aligned columns.

/**
 * The home directory as os.homedir() tells it ($HOME whenever it is set),
 * loading node:os only when $HOME is not: listing tildifies every origin.
 */
export function homeDirectory(): string {
  return process.env.HOME ?? process.getBuiltinModule('node:os').homedir()
}

/** Shows paths under the home directory as ~/... */
export function tildify(path: string, home = homeDirectory()): string {
  if (home && home !== '/' && (path === home || path.startsWith(home + '/'))) return '~' + path.slice(home.length)
  return path
}

/**
 * The characters, beyond the C0 controls, that act on a terminal or on how
 * the text around them reads instead of being read: C1 controls (a CSI
 * alone starts an escape sequence), Unicode's format characters (Cf:
 * bidirectional controls such as U+202E and U+2066-2069, which make a line
 * read in another order than it is; zero-width spaces and joiners, U+FEFF,
 * tags) and the line and paragraph separators.
 */
const ACTING = /^[\u0080-\u009f\p{Cf}\u2028\u2029]$/u

/** `<U+202E>` for such a character, shown instead of acted on; undefined for any other. Patches (ui/patch.ts) use it too. */
export function shownAsCodePoint(character: string): string | undefined {
  return ACTING.test(character) ? `<U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>` : undefined
}

/**
 * Text the command wrote (commit subjects, file names) made safe for one
 * line on a terminal: C0 control characters (escape sequences that could
 * rewrite what the user reads, newlines) become `?`, the rest of what
 * shownAsCodePoint names `<U+...>`.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]|[^\u0000-\u007f]/gu, character =>
    character.codePointAt(0)! < 0x80 ? '?' : (shownAsCodePoint(character) ?? character),
  )
}

/** A character as JSON's `\uXXXX` escapes: one per UTF-16 unit, so two for one beyond U+FFFF. */
const jsonEscaped = (character: string) =>
  Array.from({length: character.length}, (_, unit) => `\\u${character.charCodeAt(unit).toString(16).padStart(4, '0')}`).join('')

/**
 * JSON whose strings (a tree's path, an origin) may hold anything:
 * JSON.stringify escapes C0 controls but writes DEL, C1 controls and
 * format characters as they are, so those are escaped too. It reads back
 * the same.
 */
export function printableJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(/[\u007f-\u{10ffff}]/gu, character =>
    character === '\u007f' || shownAsCodePoint(character) ? jsonEscaped(character) : character,
  )
}

/** Paths for one line of a message: printable, the first ten named. */
export function listPaths(paths: string[]): string {
  const shown = paths.slice(0, 10).map(printable).join(', ')
  return paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown
}

/** The largest whole unit of an age: 45s, 5m, 2h, 3d. */
export function formatAge(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000))
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${hours}h`
  return `${Math.floor(hours / 24)}d`
}

export type Align = 'left' | 'right'

/**
 * Aligned columns separated by two spaces; no trailing spaces. `paint`
 * colours a row's cell (not the header's), its padding left plain so the
 * columns still line up.
 */
export function formatTable(header: string[], rows: string[][], align: Align[], paint?: (cell: string, row: number, column: number) => string): string {
  const all = [header, ...rows]
  const widths = header.map((_, column) => Math.max(...all.map(row => row[column].length)))
  return all
    .map((row, index) =>
      row
        .map((cell, column) => {
          const padding = ' '.repeat(widths[column] - cell.length)
          const shown = paint && index > 0 ? paint(cell, index - 1, column) : cell
          return align[column] === 'right' ? padding + shown : shown + padding
        })
        .join('  ')
        .trimEnd(),
    )
    .map(line => line + '\n')
    .join('')
}

/** `1 file`, `2 files`. */
export function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}

/** WORK as `hmm ls` shows it: `-`, `2 commits, 3 files`, `merged`, or `?` when not known. */
export function formatWork(work: {commits: number | null; files: number | null; taken: string | null}): string {
  if (work.taken) return work.taken
  if (work.commits === null || work.files === null) return '?'
  const parts = [...(work.commits > 0 ? [count(work.commits, 'commit')] : []), ...(work.files > 0 ? [count(work.files, 'file')] : [])]
  return parts.length > 0 ? parts.join(', ') : '-'
}

/** Bytes in the largest unit that keeps them at 1 or more: one decimal below 10 (`1.5`, `GB`), whole above (`265`, `MB`). */
function inUnits(bytes: number): [string, string] {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return [value < 10 && unit > 0 ? value.toFixed(1) : String(Math.round(value)), units[unit]]
}

/** Disk space as SIZE shows it: `0`, `812K`, `265M`, `1.5G`. */
export function formatSize(bytes: number): string {
  if (bytes === 0) return '0'
  const [value, unit] = inUnits(bytes)
  return value + unit.slice(0, 1)
}

/** Disk space in a sentence: `265 MB`. */
export function formatBytes(bytes: number): string {
  return inUnits(bytes).join(' ')
}

/** A word as a shell reads it back, for commands hmm prints (the helper's argv, a hint): quoted where it must be. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
