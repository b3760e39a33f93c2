// The command's processes are bounded (attacker's review 9, F3): RLIMIT_NPROC
// counts a user's tasks across user namespaces, and unbounded the command
// took all of them, so the user's shell could not fork. With a small limit
// (prlimit) the command forks until it may not, and holds that many while
// the user, outside, under the same limit, still forks. Root's tasks are
// not counted by the kernel: as root the test runs as a user ID no process
// has, so that the user's count is the test's alone.

import {spawn, spawnSync} from 'node:child_process'
import {chmodSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {userTasks} from '../world.js'
import {collect, execArgs, helper, unreachableBy, world} from './support.js'

const root = process.getuid!() === 0
const uid = root ? 3_900_000 + Math.floor(Math.random() * 90_000) : process.getuid!()
const gid = root ? uid : process.getgid!()

const tasks = () => userTasks(uid)

/** Why the test cannot run here: as root it runs the helper as another user, who must reach it (not in a 0700 home). */
const unreachable = root ? unreachableBy(uid, gid) : undefined

// Forks sleepers until the kernel refuses, says how many, and waits for
// its standard input to close before ending them.
const FORKER = `
import os, sys, time
kids = []
while len(kids) < 10000:
    try:
        pid = os.fork()
    except BlockingIOError:
        break
    if pid == 0:
        time.sleep(1000)
        os._exit(0)
    kids.append(pid)
print(len(kids), flush=True)
sys.stdin.read()
for k in kids:
    os.kill(k, 9)
    os.waitpid(k, 0)
`

// What the user may still start: the command takes at most half; the other half is the user's, and what the suite's
// other files start as the same user meanwhile (a plain user's run: their gits, helpers and nodes) must fit in it.
const FREE = 256

describe.skipIf(unreachable !== undefined)(`the command's processes${unreachable ? ` (skipped: ${unreachable})` : ''}`, () => {
  for (const isolated of [false, true])
    it(`take at most half of what the user may still start, ${isolated ? 'with' : 'without'} the namespaces: the user can still fork while the command holds all it may`, async () => {
      const w = world(`nproc-${isolated ? 'ns' : 'llo'}`)
      chmodSync(w, 0o777)
      const limit = tasks() + FREE
      const policy = ['--read', '/', '--write', w, '--dev', '/dev', ...(isolated ? ['--isolate', w] : [])]
      const child = spawn('prlimit', [`--nproc=${limit}:${limit}`, helper, ...execArgs(join(w, 'lock'), policy, ['python3', '-c', FORKER])], {
        uid,
        gid,
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      })
      const done = collect(child)
      // What the command held, or its end if it never said (then the outcome below says why).
      const held = await Promise.race([
        new Promise<number>(resolve => child.stdout!.once('data', (b: Buffer) => resolve(Number(b.toString().trim())))),
        done.then(() => 0),
      ])
      const outside = spawnSync('prlimit', [`--nproc=${limit}:${limit}`, 'sh', '-c', '(echo forked)'], {uid, gid, encoding: 'utf8'})
      child.stdin!.end()
      const r = await done
      expect(r).toMatchObject({code: 0, stderr: '', report: ''})
      expect(outside.stdout).toBe('forked\n')
      expect(held).toBeGreaterThan(0)
      // Exact with the namespaces (the command's own level); without them
      // only where no other process of the user comes and goes meanwhile.
      if (isolated || root) expect(held).toBeLessThanOrEqual(limit / 2)
    })
})
