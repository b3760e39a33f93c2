// A merge that `hmm merge` left at conflicts (SPEC `hmm merge`: once the
// user resolves them and commits, the workspace counts as merged). The user
// ends it without hmm, so hmm learns of it the next time it looks: listing
// included, which must stay cheap (SPEC `hmm ls`). While the origin's
// MERGE_HEAD still names the commits, the merge goes on: one read of a small
// file. Once it does not, one git in the origin says whether its HEAD holds
// them (committed) or not (given up), and the row is settled for good.
import {readFileSync} from 'node:fs'
import {headHolds} from '../git/head-holds.js'
import type {Store, WorkspaceRow} from './store.js'

/** Whether the merge going on in a repository (its MERGE_HEAD file) is one of `tip`. */
export function stillMerging(mergeHead: string, tip: string): boolean {
  try {
    return readFileSync(mergeHead, 'utf8').trim() === tip
  } catch {
    return false
  }
}

/**
 * The row with its pending merge settled, if that merge ended: committed,
 * the workspace was taken back as the merge would have taken it (and WORK
 * is what such a merge recorded); given up, the merge is forgotten. Still
 * going, or not to be told now (the origin gone): the row as it was.
 */
export function settleMerge(store: Store, row: WorkspaceRow): WorkspaceRow {
  const pending = row.pendingMerge
  if (!pending || stillMerging(pending.mergeHead, pending.tip)) return row
  const held = headHolds(row.origin, pending.tip, pending.git)
  if (held === undefined) return row
  const fields: Partial<WorkspaceRow> = held
    ? {workCommits: pending.commits, workFiles: pending.files, workTaken: pending.taken, pendingMerge: null}
    : {pendingMerge: null}
  store.update(row.id, fields)
  return {...row, ...fields}
}
