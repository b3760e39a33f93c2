// Memory the command holds beyond its processes (attacker's review 9, F5):
// its own /dev/shm is a tmpfs whose pages belong to no process, so the OOM
// killer, ranking processes by their memory, ended the user's programs
// first while the command's were small. The mount is bounded (10 % of the
// RAM, 64k files), and every process of the sandbox is the OOM killer's
// first choice (oom_score_adj 1000), the namespace's init too, whose end
// frees the mount; without the namespaces the keeper is left as it was.

import {readFileSync} from 'node:fs'
import {totalmem} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {execArgs, run, world} from './support.js'

const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']
const LOOK = `import os; s = os.statvfs('/dev/shm'); print(s.f_blocks * s.f_frsize, s.f_files, open('/proc/self/oom_score_adj').read().strip(), open('/proc/1/oom_score_adj').read().strip())`

describe('the memory the command may hold', () => {
  it("with the namespaces: its /dev/shm holds at most a tenth of the RAM and 64k files; it and the init are the OOM killer's first choice", async () => {
    const w = world('memory-isolated')
    const r = await run(execArgs(join(w, 'lock'), [...policy(w), '--isolate', w], ['python3', '-c', LOOK]))
    expect(r).toMatchObject({code: 0, report: ''})
    const [bytes, files, own, init] = r.stdout.trim().split(' ')
    // tmpfs rounds the size to whole pages.
    expect(Math.abs(Number(bytes) - totalmem() / 10)).toBeLessThanOrEqual(4096)
    expect(Number(files)).toBe(65536)
    expect([own, init]).toEqual(['1000', '1000'])
  })

  it("without the namespaces: the command is the OOM killer's first choice, the keeper as it was", async () => {
    const w = world('memory-landlock-only')
    const look = `echo $(cat /proc/self/oom_score_adj) $(cat /proc/$PPID/oom_score_adj)`
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['sh', '-c', look]))
    expect(r).toMatchObject({code: 0, report: ''})
    const before = readFileSync('/proc/self/oom_score_adj', 'utf8').trim()
    expect(r.stdout).toBe(`1000 ${before}\n`)
  })
})
