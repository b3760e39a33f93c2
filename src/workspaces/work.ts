// Whether a workspace holds work that was never taken back (SPEC `hmm rm`).
//
// A workspace's state is its HEAD commit and the tree of its files (ignored
// files aside). It holds no work when that state is the one it was made
// from, or the one last merged, applied or pushed (recorded by those
// commands as takenState). The tree is always written the same way
// (changes.ts), so a state recorded by `hmm apply` compares equal here.
import {treeNow} from '../git/changes.js'
import {readWorkspaceHead} from '../git/workspace-head.js'
import type {WorkspaceRow} from './store.js'
import type {Workspace} from './workspace.js'

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

/** The workspace's state now; undefined when it cannot be told (then it counts as work). */
export async function currentState(workspace: Workspace): Promise<string | undefined> {
  const head = stateHead(workspace)
  if (head === undefined) return undefined
  return stateKey(head, await treeNow(workspace))
}

export async function hasUntakenWork(workspace: Workspace): Promise<boolean> {
  const now = await currentState(workspace)
  if (now === undefined) return true
  return now !== originalState(workspace.row) && now !== workspace.row.takenState
}
