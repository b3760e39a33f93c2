// `hmm rm WS...`: refuse what is running or holds work, else remove; -f
// stops what runs and removes whatever it holds. The same check (without
// -f) decides what `hmm prune` removes.
import {stopLocked} from '../native/helper.js'
import {HmmError, reportError, say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {removeWorkspace} from '../workspaces/remove.js'
import {status} from '../workspaces/status.js'
import {holdsWork, recordWork} from '../workspaces/work.js'
import type {Workspace} from '../workspaces/workspace.js'

/** hmm keeps the workspace: it runs, or holds work never taken back (and no -f). */
export class Kept extends HmmError {}

/** Removes the workspace unless it runs or, without force, holds work never taken back (then throws Kept). */
export async function removeChecked(context: Context, workspace: Workspace, force: boolean): Promise<void> {
  const state = status(workspace)
  if (force) {
    // Every process of the workspace ends first: none may race the removal (DESIGN "Running state").
    if (stopLocked([workspace.lock])[0] === 'still-running') throw new HmmError(`workspace ${workspace.label} could not be stopped`)
  } else if (state === 'running') {
    throw new Kept(`workspace ${workspace.label} is running (hmm stop ${workspace.id} ends it; hmm rm -f ${workspace.id} stops and removes it)`)
  }
  // WORK's own computation, recorded: what ls shows after a refusal is what was refused.
  if (state === 'done' && !force && holdsWork(await recordWork(context.store, workspace, context.data, {strict: true}))) {
    throw new Kept(`workspace ${workspace.label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)`)
  }
  await removeWorkspace(context.store, workspace)
  say(`removed workspace ${workspace.label}`)
}

/** Removes each workspace it can; a refusal is reported and the others are still removed. Returns whether all went. */
export async function removeWorkspaces(keys: string[], force: boolean): Promise<boolean> {
  const context = new Context()
  let failed = false
  for (const key of keys) {
    try {
      await removeChecked(context, context.workspace(key), force)
    } catch (error) {
      reportError(error)
      failed = true
    }
  }
  context.close()
  return !failed
}
