// The lock that says a workspace is running, and the descriptors the
// command inherits. Without --isolate the helper's keeper holds the lock
// (native-helpers/keeper.c) while anything the command started lives, so
// "running" lasts exactly as long as the command (or whatever it left
// running) does, whatever becomes of hmm; the command never has the lock.

import {spawn} from 'node:child_process'
import {closeSync, openSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {shellQuote} from '../world.js'
import {collect, execArgs, helper, isLocked, run, until, world} from './support.js'

const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']

/** Starts `sh -c script` under exec with --lock, stdin a pipe, and resolves
 * once it printed its first line (so the lock is certainly taken). */
function startHolding(w: string, lock: string, script: string) {
  const child = spawn(helper, execArgs(lock, policy(w), ['sh', '-c', script]), {
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  })
  const outcome = collect(child)
  const started = new Promise<void>((ok, fail) => {
    child.stdout!.once('data', () => ok())
    child.once('close', () => fail(new Error('the command ended before it started')))
  })
  return {child, outcome, started}
}

describe('hmm-helper locked', () => {
  it('prints 0 for a file nobody locks and for a missing one, a line per file', async () => {
    const w = world('locked-none')
    writeFileSync(join(w, 'free'), '')
    const r = await run(['locked', join(w, 'free'), join(w, 'missing'), join(w, 'free')])
    expect(r).toMatchObject({code: 0, stdout: '0\n0\n0\n'})
  })
})

describe('the running lock', () => {
  it('is held while the command runs and released when it exits', async () => {
    const w = world('lock-held')
    const lock = join(w, 'lock')
    const free = join(w, 'free')
    writeFileSync(free, '')
    const {child, outcome, started} = startHolding(w, lock, 'echo ready; read line; exit 3')
    await started
    expect(isLocked(lock)).toBe(true)
    const both = await run(['locked', free, lock])
    expect(both.stdout).toBe('0\n1\n')
    child.stdin!.end('\n')
    const r = await outcome
    expect(r.code).toBe(3)
    expect(isLocked(lock)).toBe(false)
  })

  it('is released when the command is killed, and the helper dies of the same signal', async () => {
    const w = world('lock-killed')
    const lock = join(w, 'lock')
    const {child, outcome, started} = startHolding(w, lock, 'echo $$; exec sleep 30')
    const pid = new Promise<number>(resolve => child.stdout!.once('data', (line: Buffer) => resolve(Number(line.toString()))))
    await started
    expect(isLocked(lock)).toBe(true)
    process.kill(await pid, 'SIGKILL')
    expect((await outcome).signal).toBe('SIGKILL')
    expect(isLocked(lock)).toBe(false)
  })

  it('stays held by the keeper when the helper hmm started is killed, while the command runs on', async () => {
    const w = world('lock-waiter-killed')
    const lock = join(w, 'lock')
    // Not on stdin, which Node closes once the helper has exited.
    const {child, started} = startHolding(w, lock, `echo ready; while ! [ -e ${shellQuote(w)}/go ]; do sleep 0.05; done`)
    await started
    child.kill('SIGKILL')
    await new Promise(resolve => child.once('exit', resolve))
    expect(isLocked(lock)).toBe(true)
    writeFileSync(join(w, 'go'), '')
    await until(() => !isLocked(lock), 10_000, 'the command to end')
  })

  it('stays held by a background process the command left running, until it ends', async () => {
    const w = world('lock-background')
    const lock = join(w, 'lock')
    const r = await run(execArgs(lock, policy(w), ['sh', '-c', 'sleep 1.5 </dev/null >/dev/null 2>&1 & exit 0']))
    const exited = Date.now()
    expect(r.code).toBe(0)
    expect(isLocked(lock)).toBe(true)
    await until(() => !isLocked(lock), 10_000, 'the background sleep to end')
    expect(Date.now() - exited).toBeGreaterThan(800)
  }, 15_000)

  it('lets a second command on the same lock run beside the first, held until both have ended', async () => {
    const w = world('lock-shared')
    const lock = join(w, 'lock')
    const first = startHolding(w, lock, 'echo ready; read line')
    await first.started
    expect(await run(execArgs(lock, policy(w), ['sh', '-c', 'echo second ran']))).toMatchObject({code: 0, stdout: 'second ran\n'})
    const third = startHolding(w, lock, 'echo ready; read line')
    await third.started
    first.child.stdin!.end('\n')
    expect((await first.outcome).code).toBe(0)
    expect(isLocked(lock)).toBe(true)
    third.child.stdin!.end('\n')
    expect((await third.outcome).code).toBe(0)
    expect(isLocked(lock)).toBe(false)
  })

  it('is seen held by many probes at once, none mistaking another probe for a command', async () => {
    const w = world('lock-probes')
    const lock = join(w, 'lock')
    writeFileSync(lock, '')
    const many = Array.from({length: 2000}, () => lock)
    const probes = await Promise.all(Array.from({length: 8}, () => run(['locked', ...many])))
    for (const probe of probes) expect(probe.stdout).toBe('0\n'.repeat(many.length))
  })

  it("is probed without waiting on anything the command can open: an flock on the lock's directory (attacker's review 8, F3)", async () => {
    const w = world('lock-dir-held')
    const lock = join(w, 'lock')
    const {child, outcome, started} = startHolding(w, lock, 'echo ready; read line')
    await started
    // What the command can do to its workspace's directory, which it may open.
    const holder = spawn('flock', ['-x', w, 'sh', '-c', 'echo held; read line'], {stdio: ['pipe', 'pipe', 'inherit']})
    try {
      await new Promise(resolve => holder.stdout.once('data', resolve))
      expect((await run(['locked', lock])).stdout).toBe('1\n')
      child.stdin!.end('\n')
      expect((await outcome).code).toBe(0)
      expect((await run(['locked', lock])).stdout).toBe('0\n')
    } finally {
      holder.stdin.end('\n')
    }
  })

  it('gives the command no descriptor but stdin, stdout and stderr, not even the lock', async () => {
    const w = world('lock-fds')
    const lock = join(w, 'lock')
    const stray = join(w, 'stray-descriptor')
    writeFileSync(stray, '')
    const fd = openSync(stray, 'r')
    try {
      // fd 3: the report pipe; fd 4: ignored; fd 5: hmm's stray file.
      const r = await run(execArgs(lock, policy(w), ['ls', '-l', '/proc/self/fd']), {extra: ['ignore', fd]})
      expect(r.code).toBe(0)
      const fds = new Map<number, string>()
      for (const m of r.stdout.matchAll(/ (\d+) -> (.*)$/gm)) fds.set(Number(m[1]), m[2])
      // ls's own handle on the directory it lists is not inherited
      for (const [n, target] of fds) if (/^\/proc\/\d+\/fd$/.test(target)) fds.delete(n)
      const rest = [...fds].filter(([n]) => n > 2)
      expect(rest).toEqual([])
      expect([...fds.keys()].filter(n => n <= 2)).toEqual([0, 1, 2])
      expect(r.stdout).not.toContain(stray)
    } finally {
      closeSync(fd)
    }
  })

  it('keeps the report descriptor out of the command (it closes on exec)', async () => {
    const w = world('lock-report')
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['sh', '-c', 'echo via-3 >&3 || echo closed']))
    expect(r.report).toBe('')
    expect(r.stdout).toBe('closed\n')
  })
})
