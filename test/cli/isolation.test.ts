// Isolation from the user's session (SPEC "Sandbox", issue 10): the command
// has its own /tmp, $TMPDIR and /dev/shm, sees only its own processes, keeps
// what it writes in tool caches to its workspace, and cannot make hmm say
// `done` while one of its processes lives. Each escape is tried for real:
// a tmux server, a unix socket server, a file in /dev/shm, a daemon that
// double-forks, calls setsid and closes every descriptor.
import {execa} from 'execa'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

async function inSandbox(script: string, env: Record<string, string> = {}): Promise<{exitCode: number; stdout: string; stderr: string}> {
  return world.hmm(['run', '--rm', 'sh', '-c', script], {env: {...world.env, ...env}})
}

async function stateOf(id: string): Promise<string> {
  const entries = JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Array<{id: string; state: string}>
  return entries.find(entry => entry.id === id)?.state ?? 'missing'
}

/** A directory of the user's /tmp for one test, removed after it. */
function userTmp(): string {
  const dir = join('/tmp', `hmm-isolation-${randomBytes(4).toString('hex')}`)
  mkdirSync(dir)
  return dir
}

describe('the sandboxed command, isolated', () => {
  it("cannot reach the user's tmux server through its socket in /tmp", async () => {
    world = new World('tmux')
    const dir = userTmp()
    const socket = join(dir, 'default')
    const pwned = join(world.home, 'pwned')
    // Not nested in a tmux the tests may run in.
    const env = Object.fromEntries(Object.entries(world.env).filter(([key]) => key !== 'TMUX' && key !== 'TMUX_PANE'))
    await execa('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', 'sleep 600'], {env, extendEnv: false})
    try {
      const result = await inSandbox(`test -S '${socket}' && echo visible; tmux -S '${socket}' run-shell 'touch ${pwned}' 2>/dev/null && echo reached; true`)
      expect(result.exitCode, result.stderr).toBe(0)
      expect(result.stdout).toBe('')
      expect(existsSync(pwned)).toBe(false)
    } finally {
      await execa('tmux', ['-S', socket, 'kill-server'], {env, extendEnv: false, reject: false})
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it("cannot connect to a unix socket in the user's $TMPDIR, nor see its files", async () => {
    world = new World('tmpdir')
    const tmpdir = join(world.root, 'usertmp')
    mkdirSync(tmpdir)
    writeFileSync(join(tmpdir, 'note'), "the user's\n")
    const socket = join(tmpdir, 'agent.sock')
    let connections = 0
    const server = createServer(connection => {
      connections++
      connection.end()
    })
    await new Promise<void>(resolve => server.listen(socket, resolve))
    try {
      const client = `require('net').connect(${JSON.stringify(socket)}).on('connect', () => console.log('connected')).on('error', () => {})`
      const result = await inSandbox(
        `cat '${tmpdir}/note' 2>/dev/null; '${process.execPath}' -e "${client.replace(/"/g, '\\"')}"; echo mine > "$TMPDIR/mine" && cat "$TMPDIR/mine"`,
        {
          TMPDIR: tmpdir,
        },
      )
      expect(result.exitCode, result.stderr).toBe(0)
      expect(result.stdout).toBe('mine\n')
      expect(connections).toBe(0)
      expect(existsSync(join(tmpdir, 'mine'))).toBe(false)
    } finally {
      server.close()
    }
  })

  it('cannot rewrite a file another program of the user keeps in /dev/shm; its own shared memory works', async () => {
    world = new World('shm')
    const shared = `/dev/shm/hmm-isolation-${randomBytes(4).toString('hex')}`
    const own = `${shared}-own`
    writeFileSync(shared, "the user's\n")
    try {
      const result = await inSandbox(`echo evil > '${shared}'; echo own > '${own}' && cat '${own}'`)
      expect(result.stdout).toBe('own\n')
      expect(readFileSync(shared, 'utf8')).toBe("the user's\n")
      expect(existsSync(own)).toBe(false)
    } finally {
      rmSync(shared, {force: true})
      rmSync(own, {force: true})
    }
  })

  it('sees none of the processes outside its workspace', async () => {
    world = new World('pidns')
    const outside = execa('sleep', ['30'])
    try {
      const result = await inSandbox(`test -e /proc/${outside.pid}/status && echo seen; ls -d /proc/[0-9]* | wc -l`)
      expect(result.stdout).not.toContain('seen')
      // sh, ls, wc and the helper that is the namespace's init
      expect(Number(result.stdout.trim())).toBeLessThanOrEqual(5)
    } finally {
      outside.kill()
      await outside.catch(() => undefined)
    }
  })

  it('stays running while a daemon it left lives, though it double-forked, called setsid and closed every descriptor', async () => {
    world = new World('daemon')
    const marker = join(world.home, 'finish')
    const daemon = `use POSIX; exit 0 if fork; POSIX::setsid(); POSIX::_exit(0) if fork; POSIX::close($_) for 0..1023; sleep 0.05 until -e '${marker}';`
    const result = await world.hmm(['run', 'perl', '-e', daemon])
    expect(result.exitCode, result.stderr).toBe(0)
    const {id} = workspaceLine(result.stderr)
    expect(await stateOf(id)).toBe('running')
    writeFileSync(marker, '')
    for (let tries = 0; tries < 200 && (await stateOf(id)) === 'running'; tries++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await stateOf(id)).toBe('done')
  })

  it('reads the warm tool caches, but what it writes there stays in its workspace', async () => {
    world = new World('caches')
    world.write(join(world.home, '.cache', 'warm.txt'), 'warm\n')
    mkdirSync(join(world.home, '.cargo', 'bin'), {recursive: true})
    mkdirSync(join(world.home, '.npm', '_npx', 'abc'), {recursive: true})
    const script = [
      'cat ~/.cache/warm.txt',
      '(echo "#!/bin/sh" > ~/.cargo/bin/git; echo evil >> ~/.cargo/env; echo "console.log(1)" > ~/.npm/_npx/abc/index.js) 2>/dev/null',
      'echo changed > ~/.cache/warm.txt && cat ~/.cache/warm.txt',
    ].join('; ')
    const result = await world.hmm(['run', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('warm\nchanged\n')
    expect(existsSync(join(world.home, '.cargo', 'bin', 'git'))).toBe(false)
    expect(existsSync(join(world.home, '.cargo', 'env'))).toBe(false)
    expect(existsSync(join(world.home, '.npm', '_npx', 'abc', 'index.js'))).toBe(false)
    expect(readFileSync(join(world.home, '.cache', 'warm.txt'), 'utf8')).toBe('warm\n')
    // Gone with the workspace.
    const {id} = workspaceLine(result.stderr)
    expect((await world.hmm(['rm', '-f', id])).exitCode).toBe(0)
    expect(existsSync(join(world.dataDir, id))).toBe(false)
  })

  it("writes neither the origin nor the home directory through a $TMPDIR or cache that holds hmm's data directory; its own $TMPDIR works", async () => {
    world = new World('tmpdir-holds-data')
    world.file('f.txt', 'original\n')
    const tryWrites = `(echo pwned > ~/pwned; echo pwned > '${join(world.origin, 'f.txt')}'; echo pwned > ~/.cache/pwned) 2>/dev/null; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`
    mkdirSync(join(world.home, '.cache'))
    // The data directory is ~/.local/share/hmm: $TMPDIR = ~ holds it, and so would ~/.cache with HMM_HOME under it.
    const envs: Array<Record<string, string>> = [{TMPDIR: world.home}, {HMM_HOME: join(world.home, '.cache', 'hmm')}]
    for (const env of envs) {
      const result = await inSandbox(tryWrites, env)
      expect(readFileSync(join(world.origin, 'f.txt'), 'utf8')).toBe('original\n')
      expect(existsSync(join(world.home, 'pwned'))).toBe(false)
      expect(existsSync(join(world.home, '.cache', 'pwned'))).toBe(false)
      expect(result.stdout, result.stderr).toBe('t\n')
    }
  })
})

describe('hmm stop', () => {
  it('ends every process of the workspace, a daemon that ignores SIGTERM too, and waits for them', async () => {
    world = new World('stop')
    const token = `hmm-stop-${randomBytes(4).toString('hex')}`
    const alive = async () => (await execa('pgrep', ['-f', token], {reject: false})).exitCode === 0
    // Left behind, detached, deaf to SIGTERM: only SIGKILL, 5 seconds on, ends it.
    const daemon = `# ${token}\nuse POSIX; exit 0 if fork; POSIX::setsid(); POSIX::_exit(0) if fork; POSIX::close($_) for 0..1023; $SIG{TERM} = 'IGNORE'; sleep 600;`
    const result = await world.hmm(['run', '-n', 'busy', 'perl', '-e', daemon])
    const {id} = workspaceLine(result.stderr)
    expect(await stateOf(id)).toBe('running')
    expect(await alive()).toBe(true)
    const stopped = await world.hmm(['stop', 'busy'])
    expect(stopped.exitCode).toBe(0)
    expect(stopped.stderr).toBe(`hmm: stopped workspace ${id} (busy)\n`)
    expect(await alive()).toBe(false)
    expect(await stateOf(id)).toBe('done')
    const again = await world.hmm(['stop', 'busy'])
    expect(again.exitCode).toBe(0)
    expect(again.stderr).toBe(`hmm: workspace ${id} (busy) is not running\n`)
  })

  it('is what hmm run --rm does before it removes the workspace', async () => {
    world = new World('run-rm-stop')
    const token = `hmm-rm-${randomBytes(4).toString('hex')}`
    const daemon = `# ${token}\nuse POSIX; exit 0 if fork; POSIX::setsid(); POSIX::_exit(0) if fork; POSIX::close($_) for 0..1023; sleep 600;`
    const result = await world.hmm(['run', '--rm', 'perl', '-e', daemon])
    expect(result.exitCode, result.stderr).toBe(0)
    const {id} = workspaceLine(result.stderr)
    expect((await execa('pgrep', ['-f', token], {reject: false})).exitCode).toBe(1)
    expect(existsSync(join(world.dataDir, id))).toBe(false)
  })

  it('says which workspace it cannot find, and still stops the others', async () => {
    world = new World('stop-missing')
    const result = await world.hmm(['run', '-n', 'quiet', 'true'])
    const {id} = workspaceLine(result.stderr)
    const stopped = await world.hmm(['stop', 'nosuch', 'quiet'])
    expect(stopped.exitCode).toBe(1)
    expect(stopped.stderr).toBe(`hmm: no workspace nosuch\nhmm: workspace ${id} (quiet) is not running\n`)
  })
})
