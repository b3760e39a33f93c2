// Whether a workspace holds work that was never taken back (SPEC `hmm rm`).
//
// A workspace's state is its HEAD commit and the tree of its files (ignored
// files aside). It holds no work when that state is the one it was made
// from, or the one last merged, applied or pushed (recorded by those
// commands as takenState). The tree is always written the same way
// (changes.ts), so a state recorded by `hmm apply` compares equal here.
import {treeNow} from '../git/changes.js'
import {changedFiles, countWork} from '../git/work-count.js'
import {ownUncommitted} from '../git/bundle.js'
import {mergedTip, treeOf} from '../git/merged.js'
import {readWorkspaceHead} from '../git/workspace-head.js'
import {debug} from '../ui/errors.js'
import type {Store, TakenKind, WorkspaceRow} from './store.js'
import {Workspace} from './workspace.js'

export function stateKey(head: string | null, tree: string): string {
  return `${head ?? '-'} ${tree}`
}

export function originalState(row: WorkspaceRow): string | undefined {
  return row.forkTree ? stateKey(row.originKind === 'git' ? row.headCommit : null, row.forkTree) : undefined
}

/** The HEAD part of the state: null for plain origins, undefined when it cannot be read. */
export function stateHead(workspace: Workspace): string | null | undefined {
  return workspace.row.originKind === 'git' ? readWorkspaceHead(workspace.tree) : null
}

/** The state for a tree already written (by treeNow); undefined when HEAD cannot be read. */
export function stateWith(workspace: Workspace, tree: string): string | undefined {
  const head = stateHead(workspace)
  return head === undefined ? undefined : stateKey(head, tree)
}

/** Whether the workspace holds work not taken back; what cannot be told counts as work. */
export async function hasUntakenWork(workspace: Workspace): Promise<boolean> {
  const head = stateHead(workspace)
  if (head === undefined) return true
  const nowTree = await treeNow(workspace)
  const now = stateKey(head, nowTree)
  if (now === originalState(workspace.row) || now === workspace.row.takenState) return false
  return !(head !== null && (await mergedAsItIs(workspace, head, nowTree)))
}

/**
 * Whether the origin's branch holds the workspace's HEAD as hmm took it
 * (refs/hmm/<id>) and the workspace changed nothing else: a merge whose
 * conflicts the user resolved and committed, which hmm never saw end.
 */
async function mergedAsItIs(workspace: Workspace, head: string, nowTree: string): Promise<boolean> {
  try {
    if ((await mergedTip(workspace, workspace.row.origin)) !== head) return false
    return (await ownUncommitted(workspace, await treeOf(workspace, head), nowTree)) === 0
  } catch (error) {
    // The origin gone or no longer a repository: nothing there holds the work.
    debug(`could not tell whether workspace ${workspace.label} was merged: ${(error as Error).message}`)
    return false
  }
}

/** What WORK shows (SPEC `hmm ls`), as recorded: counts not taken back, or how it was taken back; null counts: not known. */
export interface Work {
  commits: number | null
  files: number | null
  taken: TakenKind | null
}

/**
 * Looks at what the workspace holds now and records it for WORK, so that
 * listing never reads a tree. Called when a command exits and when diff,
 * apply, merge and pr have looked. What cannot be told is recorded as not
 * known (`?`), never as nothing.
 */
export async function recordWork(store: Store, looked: Workspace, data: string): Promise<Work> {
  let work: Work = {commits: null, files: null, taken: null}
  // Read again: what apply, merge or pr just recorded counts.
  const row = store.get(looked.id)
  if (!row) return work
  const workspace = new Workspace(row, data)
  try {
    const head = stateHead(workspace)
    if (head !== undefined && workspace.row.forkTree) {
      const now = stateKey(head, await treeNow(workspace))
      const taken = workspace.row.takenState
      if (now === originalState(workspace.row)) work = {commits: 0, files: 0, taken: null}
      else if (now === taken) work = {commits: 0, files: 0, taken: workspace.row.takenBy}
      else {
        const nowTree = now.slice(now.indexOf(' ') + 1)
        // Still on the commit last taken back: only what changed since is left to take.
        const sinceTaken = taken !== null && taken.startsWith(`${head ?? '-'} `)
        work = sinceTaken
          ? {commits: 0, files: await changedFiles(workspace, taken.slice(taken.indexOf(' ') + 1), nowTree), taken: null}
          : {...(await countWork(workspace, data, head, nowTree)), taken: null}
      }
    }
  } catch (error) {
    debug(`could not count the work of workspace ${workspace.label}: ${(error as Error).message}`)
  }
  store.update(workspace.id, {workCommits: work.commits, workFiles: work.files, workTaken: work.taken})
  return work
}
