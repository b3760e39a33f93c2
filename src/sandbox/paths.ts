// Paths as the sandbox compares them: canonical (links resolved), and
// whether one lies within another.
import {realpathSync} from 'node:fs'
import {join, resolve} from 'node:path'

/**
 * The canonical form of a path: symbolic links resolved (Landlock and
 * Seatbelt both see resolved paths; macOS's /var is /private/var). A path
 * that does not exist yet keeps its resolved parent.
 */
export function canonical(path: string): string {
  const absolute = resolve(path)
  try {
    return realpathSync(absolute)
  } catch {
    const parent = resolve(absolute, '..')
    if (parent === absolute) return absolute
    return join(canonical(parent), absolute.slice(parent.length + (parent.endsWith('/') ? 0 : 1)))
  }
}

/** Whether `path` is `dir` or beneath it (both canonical). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`)
}

/** The paths without repeats, in their first order. */
export function unique(paths: string[]): string[] {
  return [...new Set(paths)]
}
