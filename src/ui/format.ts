// Small formatting helpers for listings: ~ paths, ages, aligned columns.
import {homedir} from 'node:os'

/** Shows paths under the home directory as ~/... */
export function tildify(path: string, home = homedir()): string {
  if (home && home !== '/' && (path === home || path.startsWith(home + '/'))) return '~' + path.slice(home.length)
  return path
}

/**
 * Text the command wrote (commit subjects, file names) made safe for one
 * line on a terminal: control characters (escape sequences that could
 * rewrite what the user reads, newlines) become `?`.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
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

/** Aligned columns separated by two spaces; no trailing spaces. */
export function formatTable(header: string[], rows: string[][], align: Align[]): string {
  const all = [header, ...rows]
  const widths = header.map((_, column) => Math.max(...all.map(row => row[column].length)))
  return all
    .map(row =>
      row
        .map((cell, column) => (align[column] === 'right' ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .map(line => line + '\n')
    .join('')
}
