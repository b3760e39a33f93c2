// Whether a background run's command is reading its terminal (SPEC
// "Background runs": `waiting` is a minute of silence and that). Linux
// only, from /proc: the keeper names itself and the init of the command's
// PID namespace in bg/pids (native-helpers/background.c); of the init's
// descendants, those in the terminal's foreground process group (stat:
// pgrp = tpgid) read it when a thread of theirs is blocked in read() of it,
// or in poll, select or epoll with it in the set for input (the call and its
// arguments in /proc/PID/task/TID/syscall; an epoll's set in fdinfo; a
// poll's or select's in the process's memory). An agent on Node waits in
// epoll_pwait with its terminal in the set; `sleep`, or a build saying
// nothing, waits on something else. What cannot be told (not Linux, /proc
// closed to this user, another architecture) is undefined.
import {closeSync, openSync, readdirSync, readFileSync, readSync, statSync} from 'node:fs'
import {join} from 'node:path'

/** A /proc file's text, or undefined where it cannot be read (gone, or closed to this user). */
function proc(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1')
  } catch {
    return undefined
  }
}

interface ProcessStat {
  pid: number
  ppid: number
  pgrp: number
  tty: number
  foreground: number
}

/** /proc/PID/stat's fields after the command name (which may hold anything, parentheses too). */
function statOf(pid: number): ProcessStat | undefined {
  const text = proc(`/proc/${pid}/stat`)
  if (!text) return undefined
  const [, ppid, pgrp, , tty, foreground] = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return {pid, ppid: Number(ppid), pgrp: Number(pgrp), tty: Number(tty), foreground: Number(foreground)}
}

/** The system calls a reader blocks in, as numbered on this machine's architecture. */
const CALLS: Record<string, {read: number[]; poll: number[]; ppoll: number[]; select: number[]; epoll: number[]}> = {
  x64: {read: [0, 17, 19], poll: [7], ppoll: [271], select: [23, 270], epoll: [232, 281, 441]},
  arm64: {read: [63, 65, 67], poll: [], ppoll: [73], select: [72], epoll: [22, 441]},
}

const POLLIN = 1
const EPOLLIN = 1

/** Whether the process's descriptor `fd` is the terminal `tty` (its device number, as stat's tty_nr). */
function isTerminal(pid: number, fd: number, tty: number): boolean {
  try {
    const stat = statSync(`/proc/${pid}/fd/${fd}`)
    return stat.isCharacterDevice() && stat.rdev === tty
  } catch {
    return false
  }
}

/** Bytes of the process's memory, or undefined where they cannot be read. */
function memory(pid: number, address: number, length: number): Buffer | undefined {
  if (length <= 0 || length > 1 << 20) return undefined
  let fd: number | undefined
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r')
    const buffer = Buffer.alloc(length)
    return readSync(fd, buffer, 0, length, address) === length ? buffer : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The descriptors an epoll instance watches for input (fdinfo's `tfd:` lines). */
function epollInputs(pid: number, epfd: number): number[] | undefined {
  const info = proc(`/proc/${pid}/fdinfo/${epfd}`)
  if (info === undefined) return undefined
  return [...info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)].filter(([, , events]) => parseInt(events, 16) & EPOLLIN).map(([, fd]) => Number(fd))
}

/** The descriptors a poll() set asks input of. */
function pollInputs(pid: number, address: number, count: number): number[] | undefined {
  const set = memory(pid, address, count * 8)
  if (!set) return undefined
  const fds: number[] = []
  for (let at = 0; at < set.length; at += 8) if (set.readInt16LE(at + 4) & POLLIN) fds.push(set.readInt32LE(at))
  return fds
}

/** The descriptors a select() set asks input of. */
function selectInputs(pid: number, count: number, address: number): number[] | undefined {
  if (address === 0) return []
  const set = memory(pid, address, Math.ceil(count / 64) * 8)
  if (!set) return undefined
  const fds: number[] = []
  for (let fd = 0; fd < count; fd++) if (set[fd >> 3] & (1 << (fd & 7))) fds.push(fd)
  return fds
}

/** Whether the thread is blocked reading the terminal; undefined where that cannot be told. */
function threadReads(pid: number, tid: string, tty: number): boolean | undefined {
  const calls = CALLS[process.arch]
  const text = proc(`/proc/${pid}/task/${tid}/syscall`)
  if (!calls || text === undefined) return undefined
  const [call, ...args] = text
    .trim()
    .split(' ')
    .map(word => Number(word))
  if (!Number.isInteger(call) || call < 0 || args.length < 6) return false // running, or not in a system call
  const reads = (fds: number[] | undefined) => (fds === undefined ? undefined : fds.some(fd => isTerminal(pid, fd, tty)))
  if (calls.read.includes(call)) return isTerminal(pid, args[0], tty)
  if (calls.epoll.includes(call)) return reads(epollInputs(pid, args[0]))
  if (calls.poll.includes(call) || calls.ppoll.includes(call)) return reads(pollInputs(pid, args[0], args[1]))
  if (calls.select.includes(call)) return reads(selectInputs(pid, args[0], args[1]))
  return false
}

/**
 * Whether the command of the background run kept in `background` (its bg
 * directory) is blocked reading its terminal; undefined where that cannot
 * be told.
 */
export function readsItsTerminal(background: string): boolean | undefined {
  if (process.platform !== 'linux') return undefined
  const [keeper, init] = (proc(join(background, 'pids')) ?? '').trim().split(' ').map(Number)
  // The init is the keeper's child while the run lives: otherwise the numbers are stale.
  if (!(keeper > 0) || !(init > 0) || statOf(init)?.ppid !== keeper) return undefined
  const all = readdirSync('/proc')
    .filter(name => /^\d+$/.test(name))
    .map(name => statOf(Number(name)))
    .filter(stat => stat !== undefined)
  const children = new Map<number, ProcessStat[]>()
  for (const stat of all) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat])
  const inRun: ProcessStat[] = []
  for (let next = children.get(init) ?? []; next.length > 0; next = next.flatMap(stat => children.get(stat.pid) ?? [])) inRun.push(...next)
  const foreground = inRun.filter(stat => stat.tty !== 0 && stat.pgrp === stat.foreground)
  let unknown = false
  for (const stat of foreground) {
    let tasks: string[]
    try {
      tasks = readdirSync(`/proc/${stat.pid}/task`)
    } catch {
      continue // gone meanwhile
    }
    for (const tid of tasks) {
      const reads = threadReads(stat.pid, tid, stat.tty)
      if (reads) return true
      if (reads === undefined) unknown = true
    }
  }
  return unknown ? undefined : false
}
