// The top of the git work tree a directory lies in (SPEC `hmm run`: in a
// subdirectory of a repository, the workspace is of the repository's top,
// and the working directory's workspaces are the top's). Found as git
// discovers a repository, without running git (bare `hmm` lists
// workspaces on every call): going up, the first directory holding a
// `.git` that is a repository (or a file naming one: linked worktrees,
// submodules); never inside a git directory, never across a file system
// boundary, never up into a directory of GIT_CEILING_DIRECTORIES.
import {existsSync, lstatSync, readFileSync, statSync} from 'node:fs'
import {basename, dirname, isAbsolute, join, resolve} from 'node:path'

/** A git directory as git tells one: HEAD, and objects of its own or of a common directory (a linked worktree's). */
function isGitDir(dir: string): boolean {
  return existsSync(join(dir, 'HEAD')) && (existsSync(join(dir, 'objects')) || existsSync(join(dir, 'commondir')))
}

function holdsRepository(dir: string): boolean {
  const dotGit = join(dir, '.git')
  const stat = lstatSync(dotGit, {throwIfNoEntry: false})
  if (stat?.isDirectory()) return isGitDir(dotGit)
  if (!stat?.isFile()) return false
  try {
    return readFileSync(dotGit, 'utf8').startsWith('gitdir: ')
  } catch {
    return false
  }
}

function ceilings(): Set<string> {
  const listed = (process.env.GIT_CEILING_DIRECTORIES ?? '').split(':')
  return new Set(listed.filter(path => isAbsolute(path)).map(path => path.replace(/(.)\/+$/, '$1')))
}

/** Where a directory lies: in a work tree (its top), inside a git directory (none: no work tree), or in neither. */
type Place = {top: string} | 'git directory' | undefined

function placeOf(dir: string): Place {
  const stop = ceilings()
  const device = statSync(dir).dev
  for (let current = dir; ;) {
    if (holdsRepository(current)) return {top: current}
    // Inside a repository's own directory there is no work tree (git says so too).
    if (basename(current) === '.git' || isGitDir(current)) return 'git directory'
    const parent = dirname(current)
    if (parent === current || stop.has(parent) || statSync(parent).dev !== device) return undefined
    current = parent
  }
}

/** The top of the work tree holding dir (canonical), or undefined when dir lies in none. */
export function workTreeTop(dir: string): string | undefined {
  const place = placeOf(dir)
  return typeof place === 'object' ? place.top : undefined
}

/** Whether dir lies inside a git directory (a repository's .git, a bare repository), where no work tree is. */
export function isInsideGitDir(dir: string): boolean {
  return placeOf(dir) === 'git directory'
}

/** The file's text, or undefined where it cannot be read. */
export function readable(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * The git directories of the repository whose work tree holds `dir` (its
 * `.git`; for a linked worktree its own and, last, the common one its
 * `.git` file leads to, which holds the repository's config).
 */
export function gitDirsOf(dir: string): string[] {
  const top = workTreeTop(dir)
  if (top === undefined) return []
  const dotGit = join(top, '.git')
  const stat = lstatSync(dotGit, {throwIfNoEntry: false})
  if (stat?.isDirectory()) return [dotGit]
  if (!stat?.isFile()) return []
  const gitDir = /^gitdir: (.+)$/m.exec(readable(dotGit) ?? '')?.[1]
  if (gitDir === undefined) return []
  const own = resolve(top, gitDir)
  const common = readable(join(own, 'commondir'))
  return common === undefined ? [own] : [own, resolve(own, common.trim())]
}
