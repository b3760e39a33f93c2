// Whether a workspace holds work that was never taken back (SPEC `hmm rm`).
//
// A workspace's state is its HEAD commit and the tree of its files (ignored
// files aside). It holds no work when that state is the one it was made
// from, or the one last merged, applied or pushed (recorded by those
// commands as takenState). The tree is always written the same way
// (changes.ts), so a state recorded by `hmm apply` compares equal here.
import {treeNow} from '../git/changes.js'
import {nestedChanges, type NestedChange} from '../git/nested-work.js'
import {changedFiles, countWork} from '../git/work-count.js'
import {ownUncommitted} from '../git/bundle.js'
import {mergedTip, treeOf} from '../git/merged.js'
import {readWorkspaceHead} from '../git/workspace-head.js'
import {debug} from '../ui/errors.js'
import type {Store, TakenKind, WorkspaceRow} from './store.js'
import {Workspace} from './workspace.js'
import {settleMerge} from './merging.js'

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
  // What nested repositories hold is never taken back.
  if ((await nestedChanges(workspace)).length > 0) return true
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

/** What WORK shows for the state `now` (HEAD `head`), given how the work was last taken back (`taken`, a state, by `by`). */
async function workSince(workspace: Workspace, data: string, head: string | null, now: string, taken: string | null, by: TakenKind | null): Promise<Work> {
  if (now === originalState(workspace.row)) return {commits: 0, files: 0, taken: null}
  if (now === taken) return {commits: 0, files: 0, taken: by}
  const nowTree = now.slice(now.indexOf(' ') + 1)
  // Still on the commit last taken back: only what changed since is left to take.
  if (taken !== null && taken.startsWith(`${head ?? '-'} `)) {
    const takenTree = taken.slice(taken.indexOf(' ') + 1)
    // Merged or pushed with changes it did not commit, the state taken is the commit's tree: what
    // the origin already had uncommitted when the workspace was made differs from it, but is not the workspace's.
    const files = by === 'applied' ? await changedFiles(workspace, takenTree, nowTree) : await ownUncommitted(workspace, takenTree, nowTree)
    return files === 0 ? {commits: 0, files: 0, taken: by} : {commits: 0, files, taken: null}
  }
  return {...(await countWork(workspace, data, head, nowTree)), taken: null}
}

/**
 * WORK with the nested repositories that changed, which hmm never takes
 * back, counted as files: each one, but one whose HEAD moved where `work`
 * already counts its gitlink among the files not taken back.
 */
function withNested(work: Work, changes: NestedChange[]): Work {
  if (changes.length === 0) return work
  const counted = work.taken === null && (work.files ?? 0) > 0
  const more = changes.filter(change => !(counted && change.moved)).length
  return {commits: work.commits, files: (work.files ?? 0) + more, taken: null}
}

/**
 * Looks at what the workspace holds now and records it for WORK, so that
 * listing never reads a tree. Called when a command exits and when diff,
 * apply, merge and pr have looked. What cannot be told is recorded as not
 * known (`?`), never as nothing. A merge left at conflicts (merging.ts) is
 * settled first if it ended; if it goes on, what WORK will be once it is
 * committed is recorded beside.
 */
export async function recordWork(store: Store, looked: Workspace, data: string): Promise<Work> {
  const unknown: Work = {commits: null, files: null, taken: null}
  let work = unknown
  // Read again: what apply, merge or pr just recorded counts.
  const found = store.get(looked.id)
  if (!found) return work
  const row = settleMerge(store, found)
  const workspace = new Workspace(row, data)
  let pending = row.pendingMerge
  try {
    const head = stateHead(workspace)
    if (head !== undefined && row.forkTree) {
      const now = stateKey(head, await treeNow(workspace))
      work = withNested(await workSince(workspace, data, head, now, row.takenState, row.takenBy), await nestedChanges(workspace))
      if (pending) pending = {...pending, ...(await workSince(workspace, data, head, now, pending.state, 'merged'))}
    } else if (pending) pending = {...pending, ...unknown}
  } catch (error) {
    debug(`could not count the work of workspace ${workspace.label}: ${(error as Error).message}`)
    if (pending) pending = {...pending, ...unknown}
  }
  store.update(workspace.id, {workCommits: work.commits, workFiles: work.files, workTaken: work.taken, pendingMerge: pending})
  return work
}
