// Whether a workspace holds work that was never taken back (SPEC `hmm rm`).
//
// A workspace's state is its HEAD commit and the tree of its files (ignored
// files aside). It holds no work when that state is the one it was made
// from, or the one last merged, applied or pushed.
import {privateRepo, writeTreeOf} from '../git/private-repo.js'
import {readWorkspaceHead} from '../git/workspace-head.js'
import type {WorkspaceRow} from './store.js'
import type {Workspace} from './workspace.js'

export function stateKey(head: string | null, tree: string): string {
  return `${head ?? '-'} ${tree}`
}

export function originalState(row: WorkspaceRow): string | undefined {
  return row.forkTree ? stateKey(row.originKind === 'git' ? row.headCommit : null, row.forkTree) : undefined
}

/** The workspace's state now; undefined when it cannot be told (then it counts as work). */
export async function currentState(workspace: Workspace): Promise<string | undefined> {
  const head = workspace.row.originKind === 'git' ? readWorkspaceHead(workspace.tree) : null
  if (head === undefined) return undefined
  const tree = await writeTreeOf(privateRepo(workspace.gitDir), workspace.tree)
  return stateKey(head, tree)
}

export async function hasUntakenWork(workspace: Workspace): Promise<boolean> {
  const now = await currentState(workspace)
  if (now === undefined) return true
  return now !== originalState(workspace.row) && now !== workspace.row.takenState
}
