// A tree made of two: one tree with some paths as another holds them. What
// hmm shows or takes of a workspace is such a tree when only part of it is
// wanted (paths given to diff and apply) or allowed (git/excluded.ts).
// Everything here is hmm's private repository; no work tree is read.
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, git, gitLine} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {privateEnv, privateRepo} from './private-repo.js'

const nulSeparated = (text: string) => text.split('\0').filter(Boolean)
const nulTerminated = (paths: string[]) => paths.map(path => `${path}\0`).join('')

/** The paths (files, links, gitlinks) that differ between two trees; `pathspecs` narrow them. */
export async function changedPaths(workspace: Workspace, from: string, to: string, pathspecs?: string[]): Promise<string[]> {
  // The same tree: nothing differs (a command that changed nothing, say).
  if (to === from) return []
  if (!pathspecs) return (await rawChangesBetween(workspace, from, to)).map(([, path]) => path)
  const on = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  return nulSeparated((await git(['diff-tree', ...ALL_GITLINKS, '-r', from, to, '-z', '--no-renames', '--name-only', '--', ...pathspecs], on)).stdout)
}

/** The tree `base` with each of `paths` as the tree `source` holds it (absent where it holds none). */
export async function treeWith(workspace: Workspace, base: string, source: string, paths: string[]): Promise<string> {
  if (paths.length === 0) return base
  const env = {...privateEnv(privateRepo(workspace.gitDir)), GIT_INDEX_FILE: join(workspace.gitDir, `index.edit-${process.pid}`)}
  const on = {cwd: workspace.gitDir, env}
  try {
    const listed = await git(['ls-tree', '-z', '--full-tree', source, '--', ...paths], {...on, env: {...env, GIT_LITERAL_PATHSPECS: '1'}})
    // `<mode> <type> <object>\t<path>`; a mode of 0 removes the path.
    const kept = nulSeparated(listed.stdout).filter(entry => !entry.startsWith('040000 '))
    const keptPaths = new Set(kept.map(entry => entry.slice(entry.indexOf('\t') + 1)))
    const zero = '0'.repeat(source.length)
    const removed = paths.filter(path => !keptPaths.has(path)).map(path => `0 ${zero}\t${path}`)
    await git(['read-tree', base], on)
    await git(['update-index', '-z', '--index-info'], {...on, input: nulTerminated([...removed, ...kept])})
    return await gitLine(['write-tree', '--missing-ok'], on)
  } finally {
    rmSync(env.GIT_INDEX_FILE, {force: true})
  }
}

/** The tree `from` with what changed in `to` under the pathspecs (git's, from the top): the part of a workspace's work asked for. */
export async function selected(workspace: Workspace, from: string, to: string, pathspecs: string[]): Promise<string> {
  return treeWith(workspace, from, to, await changedPaths(workspace, from, to, pathspecs))
}
