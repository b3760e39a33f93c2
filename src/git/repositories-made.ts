// Directories that git takes for a repository though no `.git` is in their
// path. Git looks for one in each directory it is run in or below
// (setup.c is_git_directory): a HEAD there, with objects/ and refs/ beside
// it or in the directory its `commondir` file names. Written into the
// origin, such a directory has a git run in it (a shell prompt's, an
// editor's) run what its config names: core.fsmonitor, hooks. So a change
// that makes a directory one, or writes what steers one (its HEAD, config,
// commondir, gitdir, hooks/, info/, worktrees/), is marked by hmm diff and
// refused by apply and merge unless --force, as links leading out are
// (links-out.ts); what a repository checked in as a test fixture gains in
// objects/ and refs/ is not. What the origin holds beside the tree counts,
// and the top too: one that is no repository has no `.git` there to come
// first. Names are compared folded (refused-paths.ts): where the origin's
// file system folds them, `head` is git's HEAD.
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {git} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {privateEnv, privateRepo} from './private-repo.js'
import {originEntry} from './origin-entry.js'
import {folded} from './refused-paths.js'

/** What steers the repository git finds in a directory: files beside its HEAD, and directories. */
const STEERING_FILES = new Set(['head', 'config', 'config.worktree', 'commondir', 'gitdir'])
const STEERING_DIRECTORIES = new Set(['hooks', 'info', 'worktrees'])
/** What else makes one: written into one that was a repository already, it changes only what the repository holds. */
const HOLDING = new Set(['objects', 'refs', 'packed-refs'])

/** The directories (from the top, '' for it) a change to `path` touches as a repository's, and whether it steers one there. */
function touched(path: string): Array<{dir: string; steers: boolean}> {
  const given = path.split('/')
  const names = given.map(folded)
  const dirOf = (at: number) => given.slice(0, at).join('/')
  const under = names.flatMap((name, at) =>
    at < names.length - 1 && (STEERING_DIRECTORIES.has(name) || HOLDING.has(name)) ? [{dir: dirOf(at), steers: STEERING_DIRECTORIES.has(name)}] : [],
  )
  const last = names.at(-1)!
  return STEERING_FILES.has(last) || HOLDING.has(last) ? [...under, {dir: dirOf(names.length - 1), steers: STEERING_FILES.has(last)}] : under
}

const foldedPath = (path: string) => path.split('/').map(folded).join('/')

/** A tree's files and the directories above them, folded. */
async function entriesOf(workspace: Workspace, tree: string): Promise<Set<string>> {
  const on = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const entries = new Set<string>()
  for (const file of (await git(['ls-tree', '-r', '-z', '--name-only', tree], on)).stdout.split('\0').filter(Boolean)) {
    const names = foldedPath(file).split('/')
    for (let at = 1; at <= names.length; at++) entries.add(names.slice(0, at).join('/'))
  }
  return entries
}

/**
 * The directories that git takes for repositories in `to` with the
 * origin's files beside it, which a change since any of `from` (trees or
 * commits) made so, or steered: '.' for the top. Sorted.
 */
export async function repositoriesMade(workspace: Workspace, from: string[], to: string): Promise<string[]> {
  const changes = (await Promise.all(from.map(tree => rawChangesBetween(workspace, tree, to)))).flat()
  // `:<old mode> <new mode> <old id> <new id> <status>`: what a change deletes makes no repository.
  const touches = changes.filter(([record]) => !record.endsWith(' D')).flatMap(([, path]) => touched(path))
  if (touches.length === 0) return []
  const [now, ...before] = await Promise.all([to, ...from].map(tree => entriesOf(workspace, tree)))
  const origin = workspace.row.origin
  const isRepository = (entries: Set<string>, dir: string) => {
    const has = (name: string) => entries.has(foldedPath(dir ? `${dir}/${name}` : name)) || originEntry(join(origin, dir, name)) !== undefined
    return has('HEAD') && ((has('objects') && has('refs')) || has('commondir'))
  }
  const made = touches.filter(({dir, steers}) => isRepository(now, dir) && (steers || before.some(entries => !isRepository(entries, dir))))
  return [...new Set(made.map(({dir}) => dir || '.'))].sort()
}

/** What hmm says of one, after its path. */
export const REPOSITORY_MADE = 'a directory git takes for a repository (a HEAD, and objects/ and refs/ or a commondir): git run there runs what its config says'
