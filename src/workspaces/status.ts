// What `hmm ls` calls STATE, worked out from the registry row, the lock and
// the tree. The lock (held by the init of the workspace's PID namespace, see
// native-helpers/isolate.c) is the truth for "running": it outlives a killed
// hmm and goes with the workspace's last process, so a crash never leaves a
// workspace stuck as running.
import {statSync} from 'node:fs'
import {join} from 'node:path'
import {lockedFiles} from '../native/helper.js'
import {readsItsTerminal} from '../platform/terminal-reader.js'
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

/**
 * How long a background run (`hmm run -d`) writes nothing before `hmm ls`
 * calls it `waiting` (SPEC "Background runs": an agent waiting for you).
 * HMM_WAITING_AFTER_MS is for tests only.
 */
function silenceBeforeWaiting(): number {
  const given = Number(process.env.HMM_WAITING_AFTER_MS)
  return Number.isFinite(given) && given > 0 ? given : 60_000
}

/**
 * Whether a running workspace's background run waits for the user: it has
 * written nothing for that long (the keeper appends all the command writes
 * to bg/output, native-helpers/background.c, so its mtime is the time of
 * the last output: one stat) and it is blocked reading its terminal (looked
 * at only then: platform/terminal-reader.ts), so a build saying nothing or
 * a `sleep` is not waiting. Where what it reads cannot be told, silence
 * alone decides.
 */
export function waitsForInput(workspace: Workspace, now: number): boolean {
  const output = statSync(join(workspace.background, 'output'), {throwIfNoEntry: false})
  if (output === undefined || now - output.mtimeMs <= silenceBeforeWaiting()) return false
  return readsItsTerminal(workspace.background) ?? true
}
