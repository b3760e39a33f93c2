// The disk space a workspace takes, for `hmm ls -l` (SIZE). Measured when
// asked, never while listing without -l: a command may have made millions
// of files, and each costs an lstat (native/helper.ts diskUsage).
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {diskUsage} from '../native/helper.js'
import type {Workspace} from './workspace.js'

/** The directories of `<data>/<id>/` that hold the clone: a copy of the origin, whose blocks it may share. */
const CLONES = new Set(['tree', 'base'])

/**
 * What each workspace takes now, in bytes: everything hmm keeps for it
 * beside its clone (the cache layers, its /tmp, agent state, its private
 * objects), measured; and its clone, measured too where it is a full copy.
 * Where the clone shares its blocks with the origin (SIZE 0 when made),
 * st_blocks cannot tell them from blocks written since, so the clone
 * counts as 0. null where the clone's size is not known (an older hmm).
 */
export function diskSpace(workspaces: Workspace[]): Array<number | null> {
  const measured = workspaces.map(ws => {
    if (ws.row.size === null) return []
    if (ws.row.size > 0) return [ws.root]
    try {
      return readdirSync(ws.root)
        .filter(name => !CLONES.has(name))
        .map(name => join(ws.root, name))
    } catch {
      return [] // gone: a broken workspace
    }
  })
  const usage = diskUsage(measured.flat())
  let next = 0
  return workspaces.map((ws, index) => {
    const own = measured[index].reduce(sum => sum + usage[next++], 0)
    return ws.row.size === null ? null : own
  })
}
