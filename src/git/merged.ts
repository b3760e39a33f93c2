// What of a workspace's commits the origin's branch already holds: hmm
// merge took them as refs/hmm/<id>, and once that commit is in the branch
// the origin is on (merged as it was, merged after the user resolved its
// conflicts and committed, or pulled after its pull request was merged),
// apply takes only the rest and rm counts the commits as taken back.
//
// Security: git runs in the origin (the user's own repository) and on
// hmm's private repository, whose objects include the origin's through
// alternates; never on the workspace's repository.
import {lstatSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {hmmRef} from './bundle.js'
import {branchTip} from './branch-tip.js'
import {ALL_GITLINKS, git, gitLine} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

/** The commit at refs/hmm/<id> in the origin if the origin's HEAD holds it, else undefined. */
export async function mergedTip(workspace: Workspace, origin: string): Promise<string | undefined> {
  if (workspace.row.originKind !== 'git' || !lstatSync(origin, {throwIfNoEntry: false})?.isDirectory()) return undefined
  const ref = await git(['rev-parse', '--verify', '--quiet', `${hmmRef(workspace)}^{commit}`], {cwd: origin, okStatuses: [1, 128]})
  const tip = ref.stdout.trim()
  if (ref.exitCode !== 0 || tip === '') return undefined
  const held = await git(['merge-base', '--is-ancestor', tip, 'HEAD'], {cwd: origin, okStatuses: [1, 128]})
  return held.exitCode === 0 ? tip : undefined
}

/**
 * Whether the origin's branch holds what an apply wrote: for each path
 * `tree` changes from the fork tree, the entry `tree` has (or none where
 * it deleted the path). An apply the user committed does; one thrown away
 * (git reset --hard, git checkout) does not.
 */
export async function branchHoldsApplied(workspace: Workspace, tree: string): Promise<boolean> {
  const tip = await branchTip(workspace.row.origin)
  if (!tip) return false
  const onPrivate = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const paths = async (from: string, to: string) =>
    new Set((await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--name-only', from, to], onPrivate)).stdout.split('\0').filter(Boolean))
  const [written, differing] = await Promise.all([paths(workspace.row.forkTree!, tree), paths(tree, await treeOf(workspace, tip))])
  return ![...written].some(path => differing.has(path))
}

/** A commit's tree, read through the private repository (the origin's objects are reachable there). */
export async function treeOf(workspace: Workspace, commit: string): Promise<string> {
  return gitLine(['rev-parse', '--verify', `${commit}^{tree}`], {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))})
}

/**
 * The origin's files as the workspace saw them when it was made (the fork
 * tree), or as an apply left them (`from`: that tree, and the commit hmm
 * merge had brought into the branch then), with what the commits since, up
 * to `tip`, changed: the state a merge of them left the origin's files in,
 * which apply then takes the rest from. A path both changed is the
 * commits' (git merge refuses to overwrite the origin's uncommitted change
 * of a path the commits change).
 */
export async function forkTreeWithCommits(workspace: Workspace, tip: string, from?: {tree: string; merged: string | undefined}): Promise<string> {
  const env = privateEnv(privateRepo(workspace.gitDir))
  const index = join(workspace.gitDir, 'index.merged')
  rmSync(index, {force: true})
  const onIndex = {cwd: workspace.gitDir, env: {...env, GIT_INDEX_FILE: index}}
  try {
    const since = from?.merged ?? workspace.row.headCommit
    const base = since ? await treeOf(workspace, since) : await gitLine(['mktree'], {...onIndex, input: ''})
    const changed = await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--raw', base, await treeOf(workspace, tip)], onIndex)
    // `:<old mode> <new mode> <old> <new> <status>\0<path>\0`, as update-index --index-info wants it: mode 0 removes.
    const fields = changed.stdout.split('\0')
    const entries: string[] = []
    for (let index = 0; index + 1 < fields.length; index += 2) {
      const [, newMode, , newId] = fields[index].slice(1).split(' ')
      entries.push(`${newMode} ${newId}\t${fields[index + 1]}\0`)
    }
    await git(['read-tree', from?.tree ?? workspace.row.forkTree!], onIndex)
    await git(['update-index', '-z', '--index-info'], {...onIndex, input: entries.join('')})
    return await gitLine(['write-tree', '--missing-ok'], onIndex)
  } finally {
    rmSync(index, {force: true})
  }
}
