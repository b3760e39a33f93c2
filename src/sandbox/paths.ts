// Paths as the sandbox compares them: canonical (links resolved), the
// links on the way to one, and whether one lies within another.
import {lstatSync, readdirSync, readlinkSync, realpathSync, type Dirent} from 'node:fs'
import {dirname, join, resolve} from 'node:path'

/**
 * The canonical form of a path: symbolic links resolved (Landlock and
 * Seatbelt both see resolved paths; macOS's /var is /private/var). A path
 * that does not exist yet keeps its resolved parent.
 */
export function canonical(path: string): string {
  return resolvedNow(resolve(path))
}

/**
 * canonical, for one of a batch of paths resolved at once: `known` keeps
 * the answers for the rest of it (a policy resolves hundreds of secrets'
 * places, most of them missing in one home, whose way is resolved once).
 */
export function canonicalAmong(path: string, known: Map<string, string>): string {
  const absolute = resolve(path)
  const answer = known.get(absolute) ?? resolvedNow(absolute, known)
  known.set(absolute, answer)
  return answer
}

function resolvedNow(absolute: string, known?: Map<string, string>): string {
  // Most paths a policy resolves are secrets' places that do not exist: known so without the error realpath would
  // throw, which costs several times the lstat.
  if (existsUnthrown(absolute)) {
    try {
      // The system's realpath(3): Node's own lstats each component in JavaScript, a few times slower (a policy resolves hundreds).
      return realpathSync.native(absolute)
    } catch {}
  }
  const parent = resolve(absolute, '..')
  if (parent === absolute) return absolute
  const name = absolute.slice(parent.length + (parent.endsWith('/') ? 0 : 1))
  return join(known ? canonicalAmong(parent, known) : canonical(parent), name)
}

/** Whether something (a dangling link too) is at `path`; false for any error. */
function existsUnthrown(path: string): boolean {
  try {
    return lstatSync(path, {throwIfNoEntry: false}) !== undefined
  } catch {
    return false
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

/** At most this many symbolic links are followed, as the kernel does (ELOOP). */
const MAX_LINKS = 40

/**
 * Where each symbolic link met on the way to `path` lies (a directory's on
 * the way as well as the path's own), in the order the kernel follows them,
 * then where the way ends. A link rewritten redirects the path: whoever can
 * write where one lies decides where it leads. A part that does not exist
 * ends the way there, the rest of it as named.
 */
export function linksOnTheWay(path: string): string[] {
  const way: string[] = []
  let rest = resolve(path).split('/').filter(Boolean)
  let at = '/'
  while (rest.length > 0) {
    const [name, ...after] = rest
    rest = after
    if (name === '.') continue
    if (name === '..') {
      at = dirname(at)
      continue
    }
    const location = join(at, name)
    const stat = lstatSync(location, {throwIfNoEntry: false})
    if (!stat) return [...way, join(location, ...rest)]
    if (!stat.isSymbolicLink()) {
      at = location
      continue
    }
    way.push(location)
    if (way.length > MAX_LINKS) return way
    const target = readlinkSync(location)
    if (target.startsWith('/')) at = '/'
    rest = [...target.split('/').filter(Boolean), ...rest]
  }
  return [...way, at]
}

/** The names in a directory; none where it cannot be listed (not there, not a directory, not readable). */
export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** namesIn's entries with their types (a link is a link, not what it leads to). */
export function entriesIn(dir: string): Dirent[] {
  try {
    return readdirSync(dir, {withFileTypes: true})
  } catch {
    return []
  }
}
