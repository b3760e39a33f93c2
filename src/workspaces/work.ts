// What a workspace holds that was never taken back: one computation for
// WORK (`hmm ls`, the last line of run and exec), `hmm rm` and `hmm prune`
// (SPEC `hmm apply` › State), with what log, merge and pr take
// (git/bundle.ts commitRange) and what apply starts from (appliedTree):
//
// - commits: the workspace's commits that are not in the branch the origin
//   is on now (however they got there) nor were pushed by hmm pr;
// - files: what it changed without committing, less what an apply took.
//
// The workspace is `applied` when the origin's files hold everything its
// files changed (an apply took it all, whatever was committed since), and
// `merged` or `pushed` when no commit and no file is left that way.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {treeNow} from '../git/changes.js'
import {nestedChanges, type NestedChange} from '../git/nested-work.js'
import {countWork} from '../git/work-count.js'
import {branchHoldsApplied, forkTreeWithCommits, mergedTip} from '../git/merged.js'
import {readWorkspaceHead} from '../git/workspace-head.js'
import {debug} from '../ui/errors.js'
import type {Store, TakenKind} from './store.js'
import {Workspace} from './workspace.js'
import {settleMerge} from './merging.js'

/** What WORK shows (SPEC `hmm ls`): counts not taken back, or how it was taken back; null counts: not known. */
export interface Work {
  commits: number | null
  files: number | null
  taken: TakenKind | null
}

const UNKNOWN: Work = {commits: null, files: null, taken: null}
const NOTHING: Work = {commits: 0, files: 0, taken: null}

/** Whether WORK holds something to take back (or cannot be told): what rm refuses to remove without -f. */
export const holdsWork = (work: Work) => work.commits !== 0 || work.files !== 0

/**
 * Where apply records what the origin's files got of the workspace:
 * `<tree> <merged tip or ->`, the tree being the fork tree with the changes
 * taken (all of them, or those under the paths given), the tip the commit
 * hmm merge had brought into the origin's branch then.
 */
const appliedFile = (workspace: Workspace) => join(workspace.root, 'applied-part')

export function recordApplied(workspace: Workspace, tree: string, merged: string | undefined): void {
  writeFileSync(appliedFile(workspace), `${tree} ${merged ?? '-'}\n`)
}

function readApplied(workspace: Workspace): {tree: string; merged: string} | undefined {
  if (!existsSync(appliedFile(workspace))) return undefined
  const [tree, merged = '-'] = readFileSync(appliedFile(workspace), 'utf8').trim().split(' ')
  if (!/^[0-9a-f]{40,64}$/.test(tree)) return undefined
  return {tree, merged}
}

/**
 * The workspace's files as the origin got them: the fork tree with what
 * apply took (as it recorded) and with the commits hmm merge brought into
 * the origin's branch (`merged`, mergedTip) since; what apply took counts
 * after such a merge only where the branch holds it (the user committed
 * it, rather than throwing it away). Apply takes the changes from there;
 * what is left of it is not applied. `byApply`: the last to take was an
 * apply.
 */
export async function appliedTree(workspace: Workspace, merged: string | undefined): Promise<{tree: string; byApply: boolean}> {
  const applied = readApplied(workspace)
  if (applied && applied.merged === (merged ?? '-')) return {tree: applied.tree, byApply: true}
  if (!merged) return {tree: applied?.tree ?? workspace.row.forkTree!, byApply: applied !== undefined}
  const kept = applied !== undefined && (await branchHoldsApplied(workspace, applied.tree))
  const from = kept ? {tree: applied.tree, merged: applied.merged === '-' ? undefined : applied.merged} : undefined
  return {tree: await forkTreeWithCommits(workspace, merged, from), byApply: false}
}

/** What the workspace is now: its HEAD (null for plain origins), the tree of its files, its nested repositories' changes. */
interface Looked {
  head: string | null
  tree: string
  nested: NestedChange[]
}

async function look(workspace: Workspace): Promise<Looked | undefined> {
  const head = workspace.row.originKind === 'git' ? readWorkspaceHead(workspace.tree) : null
  if (head === undefined || !workspace.row.forkTree) return undefined
  return {head, tree: await treeNow(workspace), nested: await nestedChanges(workspace)}
}

/** WORK for the workspace as looked at; `merging`: a commit to count as merged (a merge the user is resolving). */
async function workOf(workspace: Workspace, data: string, now: Looked, merging?: string): Promise<Work> {
  const {row} = workspace
  if (now.head === (row.originKind === 'git' ? row.headCommit : null) && now.tree === row.forkTree) return withNested(NOTHING, now.nested)
  const merged = merging ?? (await mergedTip(workspace, row.origin))
  const applied = await appliedTree(workspace, merged)
  // Everything the files changed is in the origin's files, whatever was committed since: the apply took it all.
  if (applied.byApply && applied.tree === now.tree) return withNested({commits: 0, files: 0, taken: 'applied'}, now.nested)
  const count = await countWork(workspace, data, now, applied.tree, merging ? [merging] : [])
  if (count.commits === 0 && count.files === 0)
    return withNested({...count, taken: now.head !== null && row.pushedCommit === now.head ? 'pushed' : 'merged'}, now.nested)
  return withNested({...count, taken: null}, now.nested)
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
 * listing never reads a tree; returns it. Called when a command exits, by
 * diff, apply, merge and pr once they have looked, and by rm and prune to
 * decide. What cannot be told is recorded as not known (`?`), never as
 * nothing; `strict` (rm): recorded so, then the reason is thrown. A merge
 * left at conflicts (merging.ts) is settled first if it ended; if it goes
 * on, what WORK will be once it is committed is recorded beside.
 */
export async function recordWork(store: Store, looked: Workspace, data: string, options: {strict?: boolean} = {}): Promise<Work> {
  let work = UNKNOWN
  // Read again: what apply, merge or pr just recorded counts.
  const found = store.get(looked.id)
  if (!found) return work
  const row = settleMerge(store, found)
  const workspace = new Workspace(row, data)
  let pending = row.pendingMerge
  let failure: unknown
  try {
    const now = await look(workspace)
    if (now) {
      work = await workOf(workspace, data, now)
      if (pending) pending = {...pending, ...(await workOf(workspace, data, now, pending.tip))}
    } else if (pending) pending = {...pending, ...UNKNOWN}
  } catch (error) {
    debug(`could not count the work of workspace ${workspace.label}: ${(error as Error).message}`)
    if (pending) pending = {...pending, ...UNKNOWN}
    failure = error
  }
  store.update(workspace.id, {workCommits: work.commits, workFiles: work.files, workTaken: work.taken, pendingMerge: pending})
  if (failure !== undefined && options.strict) throw failure
  return work
}
