// Removing a workspace: its refs/hmm/<id> in the origin, its directory, its row.
// The origin's files, index and history are not touched.
import {chmodSync, existsSync, lstatSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {git} from '../git/git.js'
import {HmmError} from '../ui/errors.js'
import type {Store} from './store.js'
import type {Workspace} from './workspace.js'

/** Deletes refs/hmm/<id> in the origin's repository, if both still exist. */
async function deleteHmmRef(workspace: Workspace): Promise<void> {
  if (workspace.row.originKind !== 'git' || !existsSync(workspace.row.origin)) return
  await git(['update-ref', '-d', `refs/hmm/${workspace.id}`], {cwd: workspace.row.origin, okStatuses: [1, 128]})
}

/** Lets the owner delete directories the command made read-only (root needs no such help). */
function makeWritable(path: string): void {
  const stat = lstatSync(path, {throwIfNoEntry: false})
  if (!stat?.isDirectory()) return
  chmodSync(path, 0o700)
  for (const entry of readdirSync(path)) makeWritable(join(path, entry))
}

export function removeDirectory(path: string): void {
  try {
    rmSync(path, {recursive: true, force: true, maxRetries: 2})
  } catch (error) {
    if ((error as {code?: string}).code !== 'EACCES' && (error as {code?: string}).code !== 'EPERM') throw error
    makeWritable(path)
    rmSync(path, {recursive: true, force: true})
  }
}

export async function removeWorkspace(store: Store, workspace: Workspace): Promise<void> {
  try {
    await deleteHmmRef(workspace)
    removeDirectory(workspace.root)
  } catch (error) {
    throw new HmmError(`could not remove workspace ${workspace.label}: ${(error as Error).message}`)
  }
  store.delete(workspace.id)
}
