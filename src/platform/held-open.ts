// Which file a process holds open: hmm stops a git stuck on a FIFO, and the
// index's lock it may have taken is then stale. Deleting the lock by name
// would delete another writer's (one that took the lock, never held by the
// stopped git, or took it since): so the lock is identified by device and
// inode among the files the process (or one it started) holds open before
// it is stopped, and deleted only while the same file is still there.
// Linux only (/proc/PID/fd); elsewhere no file is known as held.
import {lstatSync, readdirSync, readFileSync, statSync, unlinkSync} from 'node:fs'

export interface FileId {
  dev: bigint
  ino: bigint
}

function idOf(path: string, follow: boolean): FileId | undefined {
  try {
    const stat = follow ? statSync(path, {bigint: true}) : lstatSync(path, {bigint: true})
    return {dev: stat.dev, ino: stat.ino}
  } catch {
    return undefined
  }
}

const same = (a: FileId | undefined, b: FileId | undefined) => a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino

function list(path: string): string[] {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}

/** The process and those it started, through /proc's children lists. */
function family(pid: number): number[] {
  const children = list(`/proc/${pid}/task`).flatMap(task => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1').split(' ').filter(Boolean).map(Number)
    } catch {
      return []
    }
  })
  return [pid, ...children.flatMap(family)]
}

/** The file at path, if the process or one it started holds it open. */
export function heldOpen(pid: number | undefined, path: string): FileId | undefined {
  const id = idOf(path, false)
  if (pid === undefined || id === undefined) return undefined
  for (const member of family(pid)) {
    for (const fd of list(`/proc/${member}/fd`)) if (same(idOf(`/proc/${member}/fd/${fd}`, true), id)) return id
  }
  return undefined
}

/** Deletes path if it is still the file id names (nothing when id is undefined). */
export function deleteIfSame(path: string, id: FileId | undefined): void {
  if (same(idOf(path, false), id)) unlinkSync(path)
}
