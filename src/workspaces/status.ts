// What `hmm ls` calls STATE, worked out from the registry row, the lock and
// the tree. The lock (held by the init of the workspace's PID namespace, see
// native-helpers/isolate.c) is the truth for "running": it outlives a killed
// hmm and goes with the workspace's last process, so a crash never leaves a
// workspace stuck as running.
import {lockedFiles} from '../native/helper.js'
import type {Workspace} from './workspace.js'

export type Status = 'running' | 'done' | 'broken'

/** Statuses of many workspaces with at most one helper call. */
export function statuses(workspaces: Workspace[]): Status[] {
  // Only rows that hmm marked active can hold the lock: probe just those.
  const probed = workspaces.filter(ws => ws.row.active)
  const locked = new Map(lockedFiles(probed.map(ws => ws.lock)).map((held, index) => [probed[index], held]))
  return workspaces.map(ws => {
    if (locked.get(ws)) return 'running'
    if (ws.row.state !== 'ready' || !ws.treeExists()) return 'broken'
    return 'done'
  })
}

export function status(workspace: Workspace): Status {
  return statuses([workspace])[0]
}
