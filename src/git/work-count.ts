// What a workspace holds that the origin has not got, counted for WORK
// (workspaces/work.ts): its commits not in the origin's branch, and the
// files it changed that neither a commit nor an apply took.
//
// Security: as git/bundle.ts — the commits come out through a bundle made
// inside the sandbox, into hmm's private repository only (counting needs no
// more); the files are compared as trees written by hmm (changes.ts).
import type {Workspace} from '../workspaces/workspace.js'
import {commitRange, filesChanged, INCOMING_REF, ownUncommittedChanges, rawChanges, takeIntoPrivate} from './bundle.js'
import {gitLine} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

export interface WorkCount {
  commits: number
  files: number
}

/**
 * Counts the workspace's work not taken back, its HEAD (`head`) and files
 * (`nowTree`, written by treeNow) as they are now: the commits not taken
 * (commitRange, with `merging`: commits to count as taken), and the files
 * changed without a commit whose change is not in `appliedTree` (the
 * files as the origin got them: apply's base, workspaces/work.ts).
 */
export async function countWork(
  workspace: Workspace,
  data: string,
  now: {head: string | null; tree: string},
  appliedTree: string,
  merging: string[] = [],
): Promise<WorkCount> {
  const forkTree = workspace.row.forkTree!
  const moved = workspace.row.originKind === 'git' && now.head !== null && now.head !== workspace.row.headCommit
  // No commit in the bundle: HEAD moved back to what the origin had.
  const tip = moved ? await takeIntoPrivate(workspace, data, {head: now.head!}) : undefined
  const env = privateEnv(privateRepo(workspace.gitDir))
  let commits = 0
  let changes: string[]
  let from = forkTree
  if (tip) {
    commits = Number(await gitLine(['rev-list', '--count', ...(await commitRange(workspace, INCOMING_REF, merging))], {cwd: workspace.gitDir, env}))
    from = await gitLine(['rev-parse', '--verify', `${INCOMING_REF}^{tree}`], {cwd: workspace.gitDir, env})
    changes = await ownUncommittedChanges(workspace, from, now.tree)
  } else changes = [...(await rawChanges(workspace, forkTree, now.tree))]
  if (appliedTree !== forkTree && changes.length > 0) {
    // Of those, what an apply already gave the origin's files is taken.
    const notApplied = new Set([...(await rawChanges(workspace, appliedTree, now.tree))].map(change => change.slice(change.indexOf('\0') + 1)))
    changes = changes.filter(change => notApplied.has(change.slice(change.indexOf('\0') + 1)))
  }
  return {commits, files: await filesChanged(workspace, from, now.tree, changes)}
}
