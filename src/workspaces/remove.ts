// Removing a workspace: its refs/hmm/<id> in the origin, its directory, its row.
// The origin's files, index and history are not touched.
import {existsSync} from 'node:fs'
import {git} from '../git/git.js'
import {removeTree} from '../native/helper.js'
import {HmmError} from '../ui/errors.js'
import type {Store} from './store.js'
import type {Workspace} from './workspace.js'

/** Deletes refs/hmm/<id> in the origin's repository, if both still exist. */
async function deleteHmmRef(workspace: Workspace): Promise<void> {
  if (workspace.row.originKind !== 'git' || !existsSync(workspace.row.origin)) return
  await git(['update-ref', '-d', `refs/hmm/${workspace.id}`], {cwd: workspace.row.origin, okStatuses: [1, 128]})
}

export async function removeWorkspace(store: Store, workspace: Workspace): Promise<void> {
  try {
    await deleteHmmRef(workspace)
    removeTree(workspace.root)
  } catch (error) {
    throw new HmmError(`could not remove workspace ${workspace.label}: ${(error as Error).message}`)
  }
  store.delete(workspace.id)
}
