// `hmm stop WS...`: ends every process of each workspace, those the command
// left in the background too (SPEC "hmm stop").
import {HmmError, reportError, say} from '../ui/errors.js'
import {stopLocked} from '../native/helper.js'
import {Context} from '../workspaces/context.js'
import type {Workspace} from '../workspaces/workspace.js'

/** Stops each workspace found; one not found or not stoppable is reported. Returns whether all went. */
export function stopWorkspaces(keys: string[]): boolean {
  const context = new Context()
  let failed = false
  const found: Workspace[] = []
  for (const key of keys) {
    try {
      found.push(context.workspace(key))
    } catch (error) {
      reportError(error)
      failed = true
    }
  }
  const outcomes = stopLocked(found.map(workspace => workspace.lock))
  found.forEach((workspace, index) => {
    if (outcomes[index] === 'stopped') say(`stopped workspace ${workspace.label}`)
    else if (outcomes[index] === 'not-running') say(`workspace ${workspace.label} is not running`)
    else {
      reportError(new HmmError(`workspace ${workspace.label} could not be stopped`))
      failed = true
    }
  })
  context.close()
  return !failed
}
