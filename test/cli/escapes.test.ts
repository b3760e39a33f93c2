// Ways out of the sandbox. Each must fail and leave its target unchanged.
// The world lives outside /tmp (which the command may write).
import {execa, execaSync} from 'execa'
import {existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {HELPER, shellQuote, World, workspaceLine} from '../world.js'

let world: World
let secrets: Record<string, string>
const abi = Number(execaSync(HELPER, ['abi']).stdout)

beforeAll(async () => {
  world = new World('escapes')
  secrets = world.plantSecrets()
  world.file('precious.txt', 'precious\n')
})
afterEach(context => {
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => world.dispose())

async function inSandbox(script: string): Promise<{exitCode: number; stdout: string; stderr: string; tree: string}> {
  const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
  return {...result, tree: workspaceLine(result.stderr).tree}
}

const precious = () => readFileSync(join(world.origin, 'precious.txt'), 'utf8')

describe('the sandboxed command', () => {
  it('cannot write the origin by absolute path', async () => {
    const result = await inSandbox(`echo pwned > '${world.origin}/precious.txt'`)
    expect(result.exitCode).not.toBe(0)
    expect(precious()).toBe('precious\n')
  })

  it('cannot write the origin via a symlink made in the tree', async () => {
    await inSandbox(`ln -s '${world.origin}/precious.txt' link && echo pwned > link`)
    expect(precious()).toBe('precious\n')
  })

  it('cannot write the origin via a hard link made in the tree', async () => {
    const result = await inSandbox(`ln '${world.origin}/precious.txt' hard && echo linked; echo pwned > hard`)
    expect(result.stdout).not.toContain('linked')
    expect(precious()).toBe('precious\n')
  })

  it('cannot move a file out of the tree into the origin', async () => {
    const result = await inSandbox(`echo pwned > x && mv x '${world.origin}/moved' && echo moved`)
    expect(result.stdout).not.toContain('moved')
    expect(await world.sh('ls')).not.toContain('moved')
  })

  it('cannot write the origin via /proc/self/cwd/..', async () => {
    // The tree is <home>/.local/share/hmm/<id>/tree/proj: six levels up is the home directory.
    const result = await inSandbox(
      `echo pwned > /proc/self/cwd/../../../../../../src/proj/precious.txt; echo pwned > "/proc/$$/root${world.origin}/precious.txt"; echo pwned > /proc/self/cwd/../escaped && echo wrote`,
    )
    expect(result.stdout).not.toContain('wrote')
    expect(precious()).toBe('precious\n')
  })

  it('cannot read ~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh, directly or via a symlink', async () => {
    for (const [path, content] of Object.entries(secrets)) {
      const direct = await inSandbox(`cat '${path}'`)
      expect(direct.stdout).not.toContain(content)
      expect(direct.exitCode).not.toBe(0)
      const linked = await inSandbox(`ln -s '${path}' s && cat s`)
      expect(linked.stdout).not.toContain(content)
      expect(readFileSync(path, 'utf8')).toBe(content)
    }
  })

  it('cannot read or write another workspace, nor the registry', async () => {
    const other = workspaceLine((await world.hmm(['run', '-n', 'other', 'sh', '-c', 'echo mine > own.txt'])).stderr)
    const result = await inSandbox(`cat '${other.tree}/own.txt'; echo pwned > '${other.tree}/own.txt'; cat '${world.dataDir}/registry.sqlite' | head -c 16`)
    expect(result.stdout).not.toContain('mine')
    expect(result.stdout).not.toContain('SQLite format')
    expect(readFileSync(join(other.tree, 'own.txt'), 'utf8')).toBe('mine\n')
    await world.hmm(['rm', '-f', 'other'])
  })

  it('writes its own tree, /tmp and /dev/null', async () => {
    const result = await inSandbox(
      'echo ok > own && cat own && echo t > /tmp/hmm-escape-test-$$ && rm /tmp/hmm-escape-test-$$ && echo x > /dev/null && echo done',
    )
    expect(result.stdout).toBe('ok\ndone\n')
  })

  it('cannot gain privileges (NoNewPrivs)', async () => {
    const result = await inSandbox('grep NoNewPrivs /proc/self/status')
    expect(result.stdout).toMatch(/NoNewPrivs:\s+1/)
  })

  it('makes no device node, even as root', async () => {
    const result = await inSandbox('mknod disk b 7 0 && echo made; mknod null c 1 3 && echo made; ls')
    expect(result.stdout).not.toContain('made')
    expect(result.stdout).not.toMatch(/disk|null/)
  })

  it.skipIf(process.getuid?.() !== 0)('keeps, as root, only the capabilities that act within its files: no clock, modules, raw I/O', async () => {
    // The clock is not tried for real (were the test to fail, it would be set): the kernel's own account of the sets is the proof.
    const result = await inSandbox('grep -E "^Cap(Eff|Prm|Bnd|Amb)" /proc/self/status; touch mine && chown 1234:1234 mine && echo chowned')
    expect(result.stdout).toContain('chowned')
    // CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETUID NET_BIND_SERVICE NET_RAW SYS_CHROOT AUDIT_WRITE (no FSETID)
    const kept = [0, 1, 3, 5, 6, 7, 10, 13, 18, 29].reduce((mask, cap) => mask | (1n << BigInt(cap)), 0n)
    for (const set of ['CapEff', 'CapPrm', 'CapBnd']) {
      expect(BigInt('0x' + new RegExp(`${set}:\\s+([0-9a-f]+)`).exec(result.stdout)![1]), set).toBe(kept)
    }
    expect(result.stdout).toMatch(/CapAmb:\s+0+\n/)
  })

  it.skipIf(abi < 6)('cannot signal a process outside the sandbox (Landlock ABI 6+)', async () => {
    const outside = execa('sleep', ['30'])
    try {
      const result = await inSandbox(`kill -TERM ${outside.pid} && echo killed; kill -0 ${process.pid} && echo reached`)
      expect(result.stdout).not.toContain('killed')
      expect(result.stdout).not.toContain('reached') // the test's own process, an ancestor of hmm
      expect(outside.exitCode).toBeNull()
    } finally {
      outside.kill()
      await outside.catch(() => undefined)
    }
  })

  it('cannot leave a program in the caches for the user to run later (~/.cargo/bin, ~/.cargo/env, ~/.npm/_npx), while it uses the caches', async () => {
    const cargo = join(world.home, '.cargo')
    world.write(join(cargo, 'bin', 'cargo'), '#!/bin/sh\necho real cargo\n')
    world.write(join(cargo, 'env'), 'export PATH="$HOME/.cargo/bin:$PATH"\n')
    world.write(join(cargo, 'registry', 'index'), 'index\n')
    world.write(join(world.home, '.npm', '_npx', 'abc', 'package.json'), '{}\n')
    world.write(join(world.home, '.npm', '_cacache', 'index'), 'index\n')
    const result = await inSandbox(
      [
        'echo evil > ~/.cargo/bin/git',
        'echo evil > ~/.cargo/bin/cargo',
        'echo evil >> ~/.cargo/env',
        'mv ~/.cargo/bin ~/.cargo/old-bin',
        'echo evil > ~/.npm/_npx/abc/package.json',
        'mkdir ~/.npm/_npx/def',
        'echo cached >> ~/.cargo/registry/index && echo cached >> ~/.npm/_cacache/index && echo used caches',
      ].join('; '),
    )
    expect(result.stdout).toContain('used caches')
    expect(existsSync(join(cargo, 'bin', 'git'))).toBe(false)
    expect(readFileSync(join(cargo, 'bin', 'cargo'), 'utf8')).toBe('#!/bin/sh\necho real cargo\n')
    expect(readFileSync(join(cargo, 'env'), 'utf8')).toBe('export PATH="$HOME/.cargo/bin:$PATH"\n')
    expect(existsSync(join(cargo, 'old-bin'))).toBe(false)
    expect(readFileSync(join(world.home, '.npm', '_npx', 'abc', 'package.json'), 'utf8')).toBe('{}\n')
    expect(existsSync(join(world.home, '.npm', '_npx', 'def'))).toBe(false)
  })

  it("without the namespaces (landlock-only), cannot leave a socket, or a link to one, where the user's git finds its credential cache (~/.cache/git), while new and existing caches work (the attacker's eighth review, F2)", async () => {
    const llo = new World('cache-rendezvous')
    llo.write(join(llo.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    llo.write(join(llo.home, '.cache', 'pip', 'index'), 'index\n')
    const socket = '~/.cache/git/credential/socket'
    const listen = (path: string) => `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or exit 1' ${path}`
    const plant = [
      // Another cache's directory, whose own rights would travel with it, renamed to git's place.
      'mv ~/.cache/pip ~/.cache/git 2>/dev/null && echo renamed',
      'mkdir -p ~/.cache/git/credential',
      `${listen(socket)} 2>/dev/null && echo made a socket`,
      `${listen('"$PWD/sock"')} && ln -s "$PWD/sock" ${socket} 2>/dev/null && echo made a link`,
      // What tools do: a new cache with files in it, a link in an existing one.
      'mkdir ~/.cache/newtool && echo new > ~/.cache/newtool/f && cat ~/.cache/newtool/f',
      'ln -s index ~/.cache/pip/link && cat ~/.cache/pip/link',
    ].join('; ')
    try {
      // Twice: before git's directory is there, and once it is.
      for (const round of [1, 2]) {
        const result = await llo.hmm(['run', '--rm', 'sh', '-c', plant.replaceAll('/link', `/link${round}`)])
        expect(result.stdout, result.stderr).toBe('new\nindex\n')
        expect(existsSync(join(llo.home, '.cache', 'git', 'credential', 'socket'))).toBe(false)
        rmSync(join(llo.home, '.cache', 'newtool'), {recursive: true})
      }
    } finally {
      llo.dispose()
    }
  })

  it.skipIf(abi < 6)("cannot connect to the user's abstract unix sockets (Landlock ABI 6+), while its own work", async () => {
    const name = `hmm-escape-${process.pid}`
    const server = execa('python3', [
      '-c',
      `
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind('\\0' + sys.argv[1])
s.listen()
print('ready', flush=True)
while True:
    conn = s.accept()[0]
    conn.sendall(b'served')
    conn.close()
`,
      name,
    ])
    try {
      await new Promise(ready => server.stdout!.once('data', ready))
      const connect = (target: string) =>
        `python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1].replace("@", chr(0))); print(c.recv(9).decode() or "empty")' '${target}'`
      const result = await inSandbox(
        `${connect(`@${name}`)}; python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind("\\0own"); s.listen(); socket.socket(socket.AF_UNIX).connect("\\0own"); print("own ok")'`,
      )
      expect(result.stdout).not.toContain('served')
      expect(result.stderr).toMatch(/PermissionError|Operation not permitted/)
      expect(result.stdout).toContain('own ok')
      expect((await execa('sh', ['-c', connect(`@${name}`)])).stdout).toBe('served') // it was listening
    } finally {
      server.kill()
      await server.catch(() => undefined)
    }
  })

  it('inherits no descriptor of hmm other than stdin, stdout, stderr: the lock stays with the init of its namespace', async () => {
    const result = await inSandbox('ls /proc/self/fd | sort -n | tr "\\n" " "')
    // 0 1 2 and the descriptor ls itself opened to list the directory.
    expect(
      result.stdout
        .trim()
        .split(' ')
        .map(Number)
        .filter(fd => fd > 2),
    ).toHaveLength(1)
  })
})

describe('the sandbox', () => {
  it('is shown by hmm sandbox as the helper arguments hmm run uses', async () => {
    const result = await world.hmm(['sandbox', '-w', world.home])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain(`--hide ${shellQuote(join(world.home, '.ssh'))}`)
    expect(result.stdout).toContain(`--write ${shellQuote(world.home)}`)
    expect(result.stdout).toContain(`--hide ${shellQuote(world.dataDir)}`)
    writeFileSync(join(world.home, 'unused'), '')
  })
})
