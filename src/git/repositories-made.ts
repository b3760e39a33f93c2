// Directories that git may take for a repository though no `.git` is in
// their path. Git looks for one in each directory it is run in or below
// (setup.c is_git_directory): a HEAD there, with objects/ and refs/ beside
// it or in the directory its `commondir` file names. Written into the
// origin, such a directory has a git run in it (a shell prompt's, an
// editor's) run what its config names: core.fsmonitor, hooks. So a change
// that writes a HEAD, or writes beside a HEAD the tree or the origin holds
// what makes it a repository (objects/, refs/, config, commondir, ...), is
// marked by hmm diff and refused by apply and merge unless --force, as
// links leading out are (links-out.ts). The origin's top counts too: one
// that is no repository has no `.git` there to come first.
import {lstatSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {git} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {privateEnv, privateRepo} from './private-repo.js'
import {folded} from './refused-paths.js'

/**
 * Files beside a HEAD that make, or steer, the repository git finds there;
 * and directories. Names compared folded (refused-paths.ts): where the
 * origin's file system folds them, `head` is git's HEAD.
 */
const FILES_OF_A_REPOSITORY = new Set(['head', 'config', 'config.worktree', 'commondir', 'gitdir', 'packed-refs'])
const DIRECTORIES_OF_A_REPOSITORY = new Set(['objects', 'refs', 'hooks', 'info', 'worktrees'])

/** The directories (from the top, '' for it) that a change to `path` would make, or steer, a repository if a HEAD is there. */
function candidatesOf(path: string): string[] {
  const names = path.split('/')
  const under = names.flatMap((name, at) => (at < names.length - 1 && DIRECTORIES_OF_A_REPOSITORY.has(folded(name)) ? [names.slice(0, at).join('/')] : []))
  return FILES_OF_A_REPOSITORY.has(folded(names.at(-1)!)) ? [...under, names.slice(0, -1).join('/')] : under
}

const foldedPath = (path: string) => path.split('/').map(folded).join('/')

/**
 * The directories of `to` that git may take for repositories, made so or
 * touched by a change since any of `from` (trees or commits): '.' for the
 * top. Sorted.
 */
export async function repositoriesMade(workspace: Workspace, from: string[], to: string): Promise<string[]> {
  const changes = (await Promise.all(from.map(tree => rawChangesBetween(workspace, tree, to)))).flat()
  // `:<old mode> <new mode> <old id> <new id> <status>`: what a change deletes makes no repository.
  const written = changes.filter(([record]) => !record.endsWith(' D')).map(([, path]) => path)
  const candidates = new Set(written.flatMap(candidatesOf))
  if (candidates.size === 0) return []
  const on = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const files = new Set((await git(['ls-tree', '-r', '-z', '--name-only', to], on)).stdout.split('\0').map(foldedPath))
  const headOf = (dir: string) => (dir === '' ? 'HEAD' : `${dir}/HEAD`)
  const originHas = (path: string) => inOrigin(join(workspace.row.origin, path))
  return [...candidates]
    .filter(dir => files.has(foldedPath(headOf(dir))) || originHas(headOf(dir)))
    .map(dir => dir || '.')
    .sort()
}

/** Whether something is at `path`: not where a file is on the way; yes where it cannot be told (no right to look). */
function inOrigin(path: string): boolean {
  try {
    return lstatSync(path, {throwIfNoEntry: false}) !== undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOTDIR'
  }
}

/** What hmm says of one, after its path. */
export const REPOSITORY_MADE = 'a directory git may take for a repository (a HEAD in it): git run there runs what its config says'
