// Git reads the workspace's files (hmm diff, apply, rm, merge, pr), and the
// command chose what they are. Opening a FIFO blocks until someone writes
// to it, and git opens some files without looking at them first (a nested
// repository's HEAD, for one): a FIFO there would keep hmm waiting for
// ever. Git has no setting against it, so hmm watches the process and the
// ones it starts: one that has slept in the kernel's FIFO code for a second
// is stopped, and hmm says why. Linux only (/proc/PID/task/TID/wchan names where a task sleeps);
// elsewhere nothing is watched.
import {readdirSync, readFileSync} from 'node:fs'
import {runsOn} from './index.js'

/** Where a task sleeps while it waits to open a FIFO nobody opens for writing. */
const OPEN_WAIT = /^(wait_for_partner|fifo_open)$/
/** ... or to read a pipe: a FIFO nobody writes to, for a process that reads no pipe of its own. */
const READ_WAIT = /^(pipe_read|anon_pipe_read|pipe_wait(_readable)?)$/
const POLL_MS = 250
/** Polls in a row a task must be seen waiting on a FIFO. */
const STUCK_POLLS = 4

/** A /proc file's text, or '' when it is not there (the process went; no /proc; no children file). */
function proc(path: string): string {
  try {
    return readFileSync(path, 'latin1')
  } catch {
    return ''
  }
}

/**
 * Whether the process, or any process it started (those only for opens),
 * waits on a FIFO. The first `wrappers` generations only wait for the
 * program (the helper and its init): their own waits do not count.
 */
function waitsOnFifo(pid: number, readsPipes: boolean, wrappers: number): boolean {
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return false
  }
  for (const task of tasks) {
    const where = proc(`/proc/${pid}/task/${task}/wchan`).trim()
    if (wrappers === 0 && (OPEN_WAIT.test(where) || (!readsPipes && READ_WAIT.test(where)))) return true
    const children = proc(`/proc/${pid}/task/${task}/children`).split(' ').filter(Boolean)
    const next = (child: string) => (wrappers > 0 ? waitsOnFifo(Number(child), readsPipes, wrappers - 1) : waitsOnFifo(Number(child), true, 0))
    if (children.some(next)) return true
  }
  return false
}

/**
 * Watches a process that reads files the sandboxed command made; calls
 * onStuck once if it stays blocked on a FIFO. readsPipes: the process reads
 * pipes of its own (a child's output), so only waits to open a FIFO count.
 * wrappers: how many generations of processes stand between `pid` and the
 * program that reads. Returns the function that stops watching.
 */
export function watchFifoWaits(pid: number | undefined, onStuck: () => void, {readsPipes = false, wrappers = 0} = {}): () => void {
  if (pid === undefined || !runsOn('linux')) return () => {}
  let seen = 0
  const timer = setInterval(() => {
    seen = waitsOnFifo(pid, readsPipes, wrappers) ? seen + 1 : 0
    if (seen < STUCK_POLLS) return
    clearInterval(timer)
    onStuck()
  }, POLL_MS)
  timer.unref()
  return () => clearInterval(timer)
}
