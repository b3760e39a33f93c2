// Directories that git takes for a repository though no `.git` is in their
// path: git's own test (setup.c is_git_directory) is a HEAD, an objects/
// and a refs/ directory. Written into the origin, a git run in one or below
// it (a shell prompt's, an editor's) takes it for a bare repository and
// runs what its config names: core.fsmonitor, hooks. hmm diff marks them;
// apply and merge refuse them unless --force, as links leading out
// (links-out.ts). Everything here reads hmm's private repository only.
import type {Workspace} from '../workspaces/workspace.js'
import {git} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {privateEnv, privateRepo} from './private-repo.js'

/** The names a change must touch for its directory to be looked at: what makes one a repository, and its config. */
const OF_A_REPOSITORY = new Set(['HEAD', 'objects', 'refs', 'config'])

/** The directories above `path` (from the top) that hold one of its names in OF_A_REPOSITORY: candidates. */
function candidatesOf(path: string): string[] {
  const names = path.split('/')
  return names.flatMap((name, at) => (at > 0 && OF_A_REPOSITORY.has(name) ? [names.slice(0, at).join('/')] : []))
}

/**
 * The directories of `to` that git takes for repositories and that a change
 * since any of `from` (trees or commits) made so or touched, sorted.
 */
export async function repositoriesMade(workspace: Workspace, from: string[], to: string): Promise<string[]> {
  const changes = (await Promise.all(from.map(tree => rawChangesBetween(workspace, tree, to)))).flat()
  const candidates = new Set(changes.flatMap(([, path]) => candidatesOf(path)))
  if (candidates.size === 0) return []
  const on = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const files = (await git(['ls-tree', '-r', '-z', '--name-only', to], on)).stdout.split('\0').filter(Boolean)
  // Of each candidate: whether it holds a HEAD file, and anything under objects/ and refs/ (a tree holds no empty directory).
  const held = new Set<string>()
  for (const file of files) {
    const names = file.split('/')
    names.forEach((name, at) => {
      const dir = names.slice(0, at).join('/')
      if (at > 0 && candidates.has(dir) && (name === 'objects' || name === 'refs' || (name === 'HEAD' && at === names.length - 1))) held.add(`${dir}\0${name}`)
    })
  }
  return [...candidates].filter(dir => ['HEAD', 'objects', 'refs'].every(name => held.has(`${dir}\0${name}`))).sort()
}

/** What hmm says of one, after its path. */
export const REPOSITORY_MADE = 'a directory git takes for a repository (HEAD, objects/ and refs/ in it): git run there runs what its config says'
