// `hmm rm` for one workspace: refuse what is running or holds work, else remove.
import {HmmError, say} from '../ui/errors.js'
import type {Context} from './context.js'
import {removeWorkspace} from './remove.js'
import {status} from './status.js'
import {hasUntakenWork} from './work.js'

export async function removeChecked(context: Context, key: string, force: boolean): Promise<void> {
  const workspace = context.workspace(key)
  const state = status(workspace)
  if (state === 'running') throw new HmmError(`workspace ${workspace.label} is running`)
  if (state === 'done' && !force && (await hasUntakenWork(workspace))) {
    throw new HmmError(`workspace ${workspace.label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)`)
  }
  await removeWorkspace(context.store, workspace)
  say(`removed workspace ${workspace.label}`)
}
