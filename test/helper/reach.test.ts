// What the command may do to processes by their ID, beyond signals (which
// Landlock scopes): their resource limits, CPU and I/O priority, CPUs and
// scheduling (attacker's review 9, F6). Without the namespaces another of the
// user's processes is in sight: the command set RLIMIT_CORE and RLIMIT_CPU of
// the user's program outside and read its memory out of the core it dumped.
// Each such call naming another process, or a whole process group or user,
// fails with EPERM, in both modes; the same calls on the command itself
// (ID 0, as glibc's setrlimit, nice, ionice, taskset and chrt pass) still
// work. With the PID namespace the calls that name a thread by its ID
// (pthread_setaffinity_np) keep working: no process outside has an ID there.

import {spawn, type ChildProcess} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {execArgs, run, world} from './support.js'

// Each call is tried and reported as `name ok` or `name ERRNO`. TARGET is
// the victim's process ID (and group); a user ID no process has stands for
// "all of the user's processes" so that the call, let through, changes
// nothing of anyone's (it finds no process: ESRCH).
const PROBE = `
import ctypes, errno, os, resource, struct, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
arm = os.uname().machine == 'aarch64'
IOPRIO_SET, SCHED_SETATTR = (30, 274) if arm else (251, 314)
IDLE = 3 << 13 | 7  # IOPRIO_CLASS_IDLE, level 7
target = int(sys.argv[1])
NOBODY = 3999999
def call(name, f):
    try:
        r = f()
        if isinstance(r, int) and r < 0:
            raise OSError(ctypes.get_errno(), '')
        print(name, 'ok')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
attr = lambda policy: ctypes.create_string_buffer(struct.pack('IIQiIQQQ', 48, policy, 0, 19, 0, 0, 0, 0))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if target:
    call('prlimit', lambda: resource.prlimit(target, resource.RLIMIT_NOFILE, (17, hard)))
    call('setpriority', lambda: os.setpriority(os.PRIO_PROCESS, target, 19))
    call('setpriority-pgrp', lambda: os.setpriority(os.PRIO_PGRP, target, 19))
    call('ioprio_set', lambda: libc.syscall(IOPRIO_SET, 1, target, IDLE))
    call('ioprio_set-pgrp', lambda: libc.syscall(IOPRIO_SET, 2, target, IDLE))
    call('sched_setaffinity', lambda: os.sched_setaffinity(target, {0}))
    call('sched_setscheduler', lambda: os.sched_setscheduler(target, os.SCHED_IDLE, os.sched_param(0)))
    call('sched_setparam', lambda: os.sched_setparam(target, os.sched_param(0)))
    call('sched_setattr', lambda: libc.syscall(SCHED_SETATTR, target, attr(os.SCHED_BATCH), 0))
if len(sys.argv) > 2:
    call('prlimit-init', lambda: resource.prlimit(1, resource.RLIMIT_NOFILE))
call('setpriority-user', lambda: os.setpriority(os.PRIO_USER, NOBODY, 19))
call('ioprio_set-user', lambda: libc.syscall(IOPRIO_SET, 3, NOBODY, IDLE))
call('self:setrlimit', lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard)))
call('self:nice', lambda: os.nice(1))
call('self:ioprio_set', lambda: libc.syscall(IOPRIO_SET, 1, 0, IDLE))
call('self:sched_setaffinity', lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))
call('self:sched_setscheduler', lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0)))
call('self:sched_setattr', lambda: libc.syscall(SCHED_SETATTR, 0, attr(os.SCHED_BATCH), 0))
def thread():
    call('thread:sched_setaffinity', lambda: os.sched_setaffinity(threading.get_native_id(), os.sched_getaffinity(0)))
t = threading.Thread(target=thread); t.start(); t.join()
`

const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']

function results(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map(line => line.split(' ')),
  )
}

/** What another process can have changed of the victim, read from /proc outside. */
function state(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return {
    nice: stat[16], // field 19 of stat, counted from the state (field 3)
    policy: stat[38], // field 41
    cpus: /Cpus_allowed_list:\s*(\S+)/.exec(status)?.[1],
    files: /Max open files\s+(\S+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1],
  }
}

const selfCalls = {
  'self:setrlimit': 'ok',
  'self:nice': 'ok',
  'self:ioprio_set': 'ok',
  'self:sched_setaffinity': 'ok',
  'self:sched_setscheduler': 'ok',
  'self:sched_setattr': 'ok',
}

describe("the command and other processes' limits and priorities", () => {
  let victim: ChildProcess | undefined
  afterEach(() => {
    victim?.kill('SIGKILL')
  })

  it("cannot change another process's limits, priority, I/O class, CPUs or scheduling without the namespaces, nor a group's or a user's; its own, yes", async () => {
    const w = world('reach-landlock-only')
    // The user's own program outside, in a process group of its own.
    victim = spawn('sleep', ['1000'], {detached: true, stdio: 'ignore'})
    const pid = victim.pid!
    const before = state(pid)
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['python3', '-c', PROBE, String(pid)]))
    expect(r).toMatchObject({code: 0, stderr: '', report: ''})
    expect(results(r.stdout)).toEqual({
      prlimit: 'EPERM',
      setpriority: 'EPERM',
      'setpriority-pgrp': 'EPERM',
      ioprio_set: 'EPERM',
      'ioprio_set-pgrp': 'EPERM',
      sched_setaffinity: 'EPERM',
      sched_setscheduler: 'EPERM',
      sched_setparam: 'EPERM',
      sched_setattr: 'EPERM',
      'setpriority-user': 'EPERM',
      'ioprio_set-user': 'EPERM',
      ...selfCalls,
      // A thread's own ID cannot be told from another process's here.
      'thread:sched_setaffinity': 'EPERM',
    })
    expect(state(pid)).toEqual(before)
  })

  it("cannot change the namespace's init's limits nor a user's priority with the namespaces; a thread still sets its own CPUs", async () => {
    const w = world('reach-isolated')
    // Only read: the init's limits are the namespace's to keep.
    const r = await run(execArgs(join(w, 'lock'), [...policy(w), '--isolate', w], ['python3', '-c', PROBE, '0', 'init']))
    expect(r).toMatchObject({code: 0, report: ''})
    expect(results(r.stdout)).toEqual({
      'prlimit-init': 'EPERM',
      'setpriority-user': 'EPERM',
      'ioprio_set-user': 'EPERM',
      ...selfCalls,
      'thread:sched_setaffinity': 'ok',
    })
  })
})
