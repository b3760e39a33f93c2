// `hmm-helper exec --isolate`: the workspace's cache layers outlive one
// command (a second command in the same workspace sees what the first
// wrote), masks cover what they name, and the command's status, or the
// signal that ended it, comes back through the waiter as it would without.
import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {compile, preloading} from '../compile.js'
import {shellQuote} from '../world.js'
import {collect, execArgs, helper, isLocked, run, until, world} from './support.js'

const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']
const isRoot = process.getuid?.() === 0

describe('hmm-helper exec --isolate', () => {
  it('keeps what a command wrote in a cache for the next command of the same workspace, never in the cache', async () => {
    const w = world('isolate-cache')
    const cache = join(w, 'cache')
    mkdirSync(cache)
    writeFileSync(join(cache, 'warm'), 'warm\n')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const isolated = ['--isolate', ws, '--cache', cache, '--write', cache]
    const first = await run(
      execArgs(join(ws, 'lock'), [...policy(ws), ...isolated], ['sh', '-c', `cat ${shellQuote(cache)}/warm; echo made > ${shellQuote(cache)}/new`]),
    )
    expect(first).toMatchObject({code: 0, stdout: 'warm\n', report: ''})
    const second = await run(execArgs(join(ws, 'lock'), [...policy(ws), ...isolated], ['cat', join(cache, 'new')]))
    expect(second).toMatchObject({code: 0, stdout: 'made\n', report: ''})
    expect(() => readFileSync(join(cache, 'new'))).toThrow()
  })

  it("with --layers, keeps a command's cache layers apart from those of the commands without (an agent's from the rest)", async () => {
    const w = world('isolate-layers')
    const cache = join(w, 'cache')
    mkdirSync(cache)
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const isolated = (...layers: string[]) => [...policy(ws), '--isolate', ws, '--cache', cache, '--write', cache, ...layers]
    const list = ['sh', '-c', `ls ${shellQuote(cache)}; touch ${shellQuote(cache)}/by-$0`]
    const plain = await run(execArgs(join(ws, 'lock'), isolated(), [...list, 'plain']))
    expect(plain).toMatchObject({code: 0, stdout: '', report: ''})
    const agent = await run(execArgs(join(ws, 'lock'), isolated('--layers', 'caches-a'), [...list, 'agent']))
    expect(agent).toMatchObject({code: 0, stdout: '', report: ''})
    expect((await run(execArgs(join(ws, 'lock'), isolated('--layers', 'caches-a'), ['ls', cache]))).stdout).toBe('by-agent\n')
    expect((await run(execArgs(join(ws, 'lock'), isolated(), ['ls', cache]))).stdout).toBe('by-plain\n')
    for (const bad of ['..', 'a/b', 'a,upperdir=/x', '']) {
      const r = await run(execArgs(join(ws, 'lock'), isolated('--layers', bad), ['true']))
      expect(r.code, bad).toBe(125)
      expect(r.report, bad).toMatch(/^setup --layers needs a directory's name without/)
    }
  })

  it('covers a directory with an empty one and a socket with nothing', async () => {
    const w = world('isolate-mask')
    const session = join(w, 'run-user')
    mkdirSync(session)
    writeFileSync(join(session, 'bus'), 'x')
    const socket = join(w, 'docker.sock')
    const server = createServer(c => c.end('reached\n'))
    await new Promise<void>(resolve => server.listen(socket, resolve))
    try {
      const ws = join(w, 'ws')
      mkdirSync(ws)
      const isolated = ['--isolate', ws, '--mask', session, '--mask', socket]
      const r = await run(
        execArgs(join(ws, 'lock'), [...policy(ws), ...isolated], ['sh', '-c', `ls -A ${shellQuote(session)}; test -S ${shellQuote(socket)} || echo no-socket`]),
      )
      expect(r).toMatchObject({code: 0, stdout: 'no-socket\n', report: ''})
    } finally {
      server.close()
    }
  })

  it('skips a mask target removed between hmm naming it and the mount (another program removed it: nothing is left to cover)', async () => {
    const w = world('isolate-mask-vanished')
    const vanishing = [join(w, 'vanishing-dir'), join(w, 'vanishing-file')]
    mkdirSync(vanishing[0])
    writeFileSync(vanishing[1], 'x')
    const kept = join(w, 'kept')
    mkdirSync(kept)
    writeFileSync(join(kept, 'f'), 'x')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const shim = compile('vanish-at-mount.c', join(w, 'vanish-at-mount.so'), ['-shared', '-fPIC', '-ldl'])
    const masks = [...vanishing, kept].flatMap(path => ['--mask', path])
    const r = await run(
      execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws, ...masks], ['sh', '-c', `ls -A ${shellQuote(kept)}; echo ran`]),
      preloading(shim),
    )
    expect(r).toMatchObject({code: 0, stdout: 'ran\n', report: ''})
    for (const path of vanishing) expect(existsSync(path)).toBe(false)
  })

  it('with --cover-data, shows the data directory holding the workspace alone, the workspace as it is', async () => {
    const w = world('isolate-data')
    const data = join(w, 'data')
    const ws = join(data, 'mine')
    mkdirSync(join(ws, 'tree'), {recursive: true})
    writeFileSync(join(ws, 'tree', 'f'), 'own\n')
    mkdirSync(join(data, 'other'))
    writeFileSync(join(data, 'registry'), 'x')
    const isolated = ['--isolate', ws, '--cover-data', data]
    const r = await run(
      execArgs(
        join(ws, 'lock'),
        [...policy(ws), ...isolated],
        ['sh', '-c', `ls -A ${shellQuote(data)}; cat ${shellQuote(ws)}/tree/f; mkdir ${shellQuote(data)}/new 2>/dev/null || echo refused`],
      ),
    )
    expect(r).toMatchObject({code: 0, stdout: 'mine\nown\nrefused\n', report: ''})
    const apart = await run(execArgs(join(w, 'lock'), [...policy(w), '--isolate', w, '--cover-data', data], ['true']))
    expect(apart.code).toBe(125)
    expect(apart.report).toMatch(/^setup data: the workspace .* is not a directory of /)
  })

  it("with a grant of the data directory itself, keeps the workspace's bookkeeping read-only but its tree", async () => {
    const w = world('isolate-data-grant')
    const data = join(w, 'data')
    const ws = join(data, 'mine')
    mkdirSync(join(ws, 'tree'), {recursive: true})
    mkdirSync(join(ws, 'git'))
    writeFileSync(join(ws, 'git', 'config'), '[core]\n')
    const grants = ['--read', '/', '--write', join(ws, 'tree'), '--write', data, '--dev', '/dev', '--isolate', ws, '--cover-data', data]
    const script = `echo mine > ${shellQuote(ws)}/tree/f && echo tree; (echo x >> ${shellQuote(ws)}/git/config) 2>/dev/null || echo config; (echo > ${shellQuote(ws)}/new) 2>/dev/null || echo new`
    const r = await run(execArgs(join(ws, 'lock'), grants, ['sh', '-c', script]))
    expect(r).toMatchObject({code: 0, stdout: 'tree\nconfig\nnew\n', report: ''})
    expect(readFileSync(join(ws, 'git', 'config'), 'utf8')).toBe('[core]\n')
  })

  // A user logging in while the command runs gets /run/user/<uid> mounted then; a disk, an automount or
  // sshfs arrives the same way. Had the host's mounts kept reaching the namespace, each would arrive
  // unmasked and writable (chmod, chown: the read-only pass ran before).
  it.skipIf(!isRoot)('receives no mount the host makes after the command started [mounting needs root]', async () => {
    const w = world('isolate-late-mount')
    const shared = join(w, 'shared')
    mkdirSync(shared)
    const mount = (...args: string[]) => expect(spawnSync('mount', args, {encoding: 'utf8'}).stderr).toBe('')
    mount('-t', 'tmpfs', 'hmm-test', shared)
    mount('--make-shared', shared)
    const late = join(shared, 'late')
    try {
      const ws = join(w, 'ws')
      mkdirSync(ws)
      const [started, go] = [join(ws, 'started'), join(ws, 'go')]
      // mountinfo writes a space in a path as \040.
      const mounted = ` ${late.replaceAll(' ', '\\040')} `
      const look = `touch ${shellQuote(started)}; while [ ! -e ${shellQuote(go)} ]; do sleep 0.02; done; ls -A ${shellQuote(late)}; grep -cF -e ${shellQuote(mounted)} /proc/self/mountinfo`
      const child = spawn(helper, execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], ['sh', '-c', look]), {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      })
      const outcome = collect(child)
      await until(() => existsSync(started), 30_000, 'the command to start')
      mkdirSync(late)
      mount('-t', 'tmpfs', 'hmm-test-late', late)
      writeFileSync(join(late, 'victim'), 'x')
      writeFileSync(go, '')
      expect(await outcome).toMatchObject({code: 1, stdout: '0\n', report: ''})
    } finally {
      spawnSync('umount', ['-R', shared])
    }
  })

  it('ends as the command ended: its status, or the signal that killed it', async () => {
    const w = world('isolate-status')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const status = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], ['sh', '-c', 'exit 42']))
    expect(status).toMatchObject({code: 42, report: ''})
    const killed = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], ['sh', '-c', 'kill -TERM $$']))
    expect(killed).toMatchObject({code: null, signal: 'SIGTERM', report: ''})
    const missing = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], ['no-such-command-hmm']))
    expect(missing.code).toBe(127)
    expect(missing.report).toMatch(/^exec ENOENT /)
  })

  it('with --end-with-command, ends what the command left running when it ends (the lock is free at once); without, keeps it', async () => {
    const w = world('isolate-end')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const leave = ['sh', '-c', 'setsid sleep 600 </dev/null >/dev/null 2>&1 & exit 0']
    const ended = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws, '--end-with-command'], leave))
    expect(ended).toMatchObject({code: 0, report: ''})
    expect(isLocked(join(ws, 'lock'))).toBe(false)
    const kept = await run(execArgs(join(ws, 'lock2'), [...policy(ws), '--isolate', ws], leave))
    expect(kept).toMatchObject({code: 0, report: ''})
    expect(isLocked(join(ws, 'lock2'))).toBe(true)
    await run(['stop', join(ws, 'lock2')])
    expect(isLocked(join(ws, 'lock2'))).toBe(false)
  })

  it("with --end-with-command and no terminal, the command is its namespace's init (hmm's readers: no process of the helper's beside it), its status comes back", async () => {
    const w = world('isolate-end-init')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const r = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws, '--end-with-command'], ['sh', '-c', 'echo $$; exit 7']))
    expect(r).toMatchObject({code: 7, stdout: '1\n', report: ''})
    const missing = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws, '--end-with-command'], ['no-such-program-hmm']))
    expect(missing.code).toBe(127)
    expect(missing.report).toMatch(/^exec ENOENT /)
  })

  it('stops a workspace whatever the length of the path the helper was started from (an npm install puts it 65-85 bytes deep)', async () => {
    const w = world('isolate-stop-long')
    const installed = join(w, 'lib', 'node_modules', 'hmm-sandbox', 'native-helpers', 'build', 'x'.repeat(40))
    mkdirSync(installed, {recursive: true})
    const program = join(installed, 'hmm-helper')
    copyFileSync(helper, program)
    chmodSync(program, 0o755)
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const leave = ['sh', '-c', 'setsid sleep 600 </dev/null >/dev/null 2>&1 & exit 0']
    expect(await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], leave), {program})).toMatchObject({code: 0, report: ''})
    expect(isLocked(join(ws, 'lock'))).toBe(true)
    expect(await run(['stop', join(ws, 'lock')], {program})).toMatchObject({code: 0, stdout: '1\n'})
    expect(isLocked(join(ws, 'lock'))).toBe(false)
  })

  it("fails the set-up where a bind's source is not there as named (a link on the way, or gone), rather than leave the bind out; a login may be missing", async () => {
    const w = world('isolate-bind-source')
    const ws = join(w, 'real', 'ws')
    mkdirSync(ws, {recursive: true})
    const copy = join(ws, 'state.json')
    writeFileSync(copy, 'copy\n')
    symlinkSync(join(w, 'real'), join(w, 'link'))
    const state = join(w, 'state.json')
    writeFileSync(state, "the user's\n")
    const bind = (source: string, target = state) => ['--bind-src', source, '--bind-dst', target]
    const read = ['sh', '-c', `cat ${shellQuote(state)}`]
    const bound = await run(execArgs(join(ws, 'lock'), [...policy(w), '--isolate', ws, ...bind(copy)], read))
    expect(bound).toMatchObject({code: 0, stdout: 'copy\n', report: ''})
    for (const source of [join(w, 'link', 'ws', 'state.json'), join(ws, 'gone.json')]) {
      const r = await run(execArgs(join(ws, 'lock'), [...policy(w), '--isolate', ws, ...bind(source)], read))
      expect(r.code, source).toBe(125)
      expect(r.report).toBe(
        `setup bind: cannot open ${source}: ${source.endsWith('gone.json') ? 'No such file or directory' : 'Too many levels of symbolic links'}\n`,
      )
    }
    const login = join(w, 'login.json')
    const noLogin = await run(execArgs(join(ws, 'lock'), [...policy(w), '--isolate', ws, ...bind(login, login)], read))
    expect(noLogin).toMatchObject({code: 0, stdout: "the user's\n", report: ''})
  })

  it('leaves the user at least half of each per-user kernel count (inotify, fanotify, namespaces) however many the command takes', async () => {
    const w = world('isolate-counts')
    const ws = join(w, 'ws')
    mkdirSync(ws)
    const limits = '/proc/sys/user'
    const half = Object.fromEntries(
      readdirSync(limits)
        .filter(name => name.startsWith('max_'))
        .map(name => [name, Math.floor(Number(readFileSync(join(limits, name), 'utf8')) / 2)]),
    )
    // Takes inotify instances until refused, holding them, then says how many it got and the limits it sees.
    const take = [
      'import ctypes, json, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'held = []',
      'while len(held) < 100000:',
      '    fd = libc.inotify_init()',
      '    if fd < 0: break',
      '    held.append(fd)',
      `seen = {n: int(open('${limits}/' + n).read()) for n in os.listdir('${limits}') if n.startswith('max_')}`,
      "print(json.dumps({'taken': len(held), 'seen': seen}))",
    ].join('\n')
    const r = await run(execArgs(join(ws, 'lock'), [...policy(ws), '--isolate', ws], ['python3', '-c', take]))
    expect(r).toMatchObject({code: 0, report: ''})
    const {taken, seen} = JSON.parse(r.stdout) as {taken: number; seen: Record<string, number>}
    expect(seen).toEqual(half)
    expect(taken).toBeLessThanOrEqual(half.max_inotify_instances)
  })

  it('refuses --end-with-command without namespaces', async () => {
    const w = world('isolate-end-alone')
    const r = await run(execArgs(join(w, 'lock'), [...policy(w), '--end-with-command'], ['true']))
    expect(r.code).toBe(125)
    expect(r.report).toMatch(/^setup usage: /)
  })
})
