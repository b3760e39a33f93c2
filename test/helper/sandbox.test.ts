// The sandbox's walls, tried from inside with the policy `hmm run` gives a
// command: read everything, write only the tree, /tmp and devices, and read
// nothing of ~/.ssh, ~/.aws or the data directory except the tree itself.
// Each way out must fail and leave its target as it was.
//
// Every world lives outside /tmp (the command may write /tmp): a fake HOME
// with secrets, a data directory holding two workspaces, and a file outside.

import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {abi, execArgs, helper, run, world} from './support.js'

const SECRET = 'BEGIN-SECRET-KEY-material'

interface Sandbox {
  root: string
  home: string
  data: string
  tree: string
  outside: string
  /** Runs sh -c script inside the sandbox, in the tree. */
  sh(script: string): ReturnType<typeof run>
}

function sandbox(name: string): Sandbox {
  const root = world(name)
  const home = join(root, 'home')
  const data = join(root, 'data')
  const tree = join(data, 'k3xq9a', 'tree', 'proj')
  const outside = join(root, 'outside')
  for (const d of [join(home, '.ssh'), join(home, '.aws'), tree, join(data, 'p7mw2d', 'tree', 'proj'), outside]) mkdirSync(d, {recursive: true})
  writeFileSync(join(home, '.ssh', 'id_rsa'), SECRET)
  writeFileSync(join(home, '.aws', 'credentials'), SECRET)
  writeFileSync(join(home, 'notes.txt'), 'notes\n')
  writeFileSync(join(data, 'p7mw2d', 'tree', 'proj', 'secret.txt'), SECRET)
  writeFileSync(join(data, 'k3xq9a', 'tree', 'victim'), 'original\n')
  writeFileSync(join(outside, 'file.txt'), 'original\n')
  writeFileSync(join(tree, 'file.txt'), 'in the tree\n')
  const lock = join(data, 'k3xq9a', 'lock')
  const policy = [
    '--read',
    '/',
    '--write',
    tree,
    '--write',
    '/tmp',
    '--dev',
    '/dev',
    '--hide',
    join(home, '.ssh'),
    '--hide',
    join(home, '.aws'),
    '--hide',
    data,
  ]
  return {
    root,
    home,
    data,
    tree,
    outside,
    sh: script => run(execArgs(lock, ['--chdir', tree, ...policy], ['sh', '-c', script])),
  }
}

const read = (p: string) => readFileSync(p, 'utf8')
/** Quoted for sh. */
const sq = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`

// A server on an abstract unix socket (no file: Landlock's file rules do not
// see it), and clients that say how connecting went.
const ABSTRACT_SERVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind('\\0' + sys.argv[1])
s.listen()
print('ready', flush=True)
while True:
    s.accept()[0].close()
`
const ABSTRACT_CONNECT = `
import errno, socket, sys
try:
    socket.socket(socket.AF_UNIX).connect('\\0' + sys.argv[1])
    print('connected')
except OSError as e:
    print(errno.errorcode[e.errno])
`
const ABSTRACT_OWN = `
import os, socket
s = socket.socket(socket.AF_UNIX)
s.bind('\\0hmm-own-%d' % os.getpid())
s.listen()
socket.socket(socket.AF_UNIX).connect('\\0hmm-own-%d' % os.getpid())
print('own ok')
`

describe('the sandbox', () => {
  it('cannot write a file outside its tree by absolute path', async () => {
    const s = sandbox('write-outside')
    const target = join(s.outside, 'file.txt')
    expect((await s.sh(`echo pwned > '${target}'`)).code).not.toBe(0)
    expect((await s.sh(`echo pwned >> '${target}'`)).code).not.toBe(0)
    expect((await s.sh(`: > '${target}'`)).code).not.toBe(0) // truncation
    expect((await s.sh(`touch '${join(s.outside, 'new')}'`)).code).not.toBe(0)
    expect((await s.sh(`mkdir '${join(s.outside, 'dir')}'`)).code).not.toBe(0)
    expect((await s.sh(`rm -f '${target}'`)).code).not.toBe(0)
    expect(read(target)).toBe('original\n')
    expect(existsSync(join(s.outside, 'new'))).toBe(false)
    expect(existsSync(join(s.outside, 'dir'))).toBe(false)
  })

  it('cannot write through a symlink in its tree that points outside', async () => {
    const s = sandbox('write-symlink')
    const target = join(s.outside, 'file.txt')
    symlinkSync(target, join(s.tree, 'abs-link'))
    symlinkSync('../../../../outside/file.txt', join(s.tree, 'rel-link'))
    symlinkSync(s.outside, join(s.tree, 'dir-link'))
    expect(read(join(s.tree, 'rel-link'))).toBe('original\n') // the link does lead there
    expect((await s.sh('echo pwned > abs-link')).code).not.toBe(0)
    expect((await s.sh('echo pwned > rel-link')).code).not.toBe(0)
    expect((await s.sh('echo pwned > dir-link/file.txt')).code).not.toBe(0)
    expect((await s.sh('touch dir-link/new')).code).not.toBe(0)
    expect(read(target)).toBe('original\n')
    expect(existsSync(join(s.outside, 'new'))).toBe(false)
  })

  it('cannot hard-link a file from outside into its tree', async () => {
    const s = sandbox('hardlink-in')
    const target = join(s.outside, 'file.txt')
    const r = await s.sh(`ln '${target}' x`)
    expect(r.code).not.toBe(0)
    expect(existsSync(join(s.tree, 'x'))).toBe(false)
    // and had it worked, writing through it is what must not happen
    await s.sh('echo pwned > x')
    expect(read(target)).toBe('original\n')
  })

  it('cannot move a file of its tree out of it', async () => {
    const s = sandbox('move-out')
    writeFileSync(join(s.tree, 'moveme.txt'), 'mine\n')
    const r = await s.sh(`mv moveme.txt '${s.outside}/'`)
    expect(r.code).not.toBe(0)
    expect(existsSync(join(s.outside, 'moveme.txt'))).toBe(false)
    expect(read(join(s.tree, 'moveme.txt'))).toBe('mine\n')
  })

  it('cannot move its tree or anything above it', async () => {
    const s = sandbox('move-tree')
    const r = await s.sh(`mv '${s.tree}' '${s.tree}-moved'`)
    expect(r.code).not.toBe(0)
    expect(existsSync(join(s.tree, 'file.txt'))).toBe(true)
  })

  it('cannot write outside through /proc/self/cwd/..', async () => {
    const s = sandbox('proc-cwd')
    const victim = join(s.data, 'k3xq9a', 'tree', 'victim')
    expect((await s.sh('echo pwned > /proc/self/cwd/../victim')).code).not.toBe(0)
    expect((await s.sh(`echo pwned > /proc/self/root${victim}`)).code).not.toBe(0)
    expect(read(victim)).toBe('original\n')
  })

  it('cannot read ~/.ssh or ~/.aws, directly, through /proc or through a symlink in its tree', async () => {
    const s = sandbox('read-secrets')
    const key = join(s.home, '.ssh', 'id_rsa')
    symlinkSync(key, join(s.tree, 'key'))
    symlinkSync(join(s.home, '.aws'), join(s.tree, 'aws'))
    for (const script of [
      `cat '${key}'`,
      `cat '${join(s.home, '.aws', 'credentials')}'`,
      'cat key',
      'cat aws/credentials',
      `cat /proc/self/root${key}`,
      `cp '${key}' stolen`,
    ]) {
      const r = await s.sh(script)
      expect(r.code, script).not.toBe(0)
      expect(r.stdout, script).not.toContain(SECRET)
    }
    expect(existsSync(join(s.tree, 'stolen'))).toBe(false)
  })

  it('cannot read a hidden path through a symlink beside it', async () => {
    const s = sandbox('read-sibling-link')
    // ~/keys -> ~/.ssh: the walk around ~/.ssh must not grant the link's target.
    symlinkSync(join(s.home, '.ssh'), join(s.home, 'keys'))
    const r = await s.sh(`cat '${join(s.home, 'keys', 'id_rsa')}'`)
    expect(r.code).not.toBe(0)
    expect(r.stdout).not.toContain(SECRET)
    // while what truly lies beside the hidden path stays readable
    expect((await s.sh(`cat '${join(s.home, 'notes.txt')}'`)).stdout).toBe('notes\n')
  })

  it('cannot read other workspaces in the data directory, while its own tree is readable and writable', async () => {
    const s = sandbox('datadir')
    const other = join(s.data, 'p7mw2d', 'tree', 'proj', 'secret.txt')
    const denied = await s.sh(`cat '${other}'`)
    expect(denied.code).not.toBe(0)
    expect(denied.stdout).not.toContain(SECRET)
    expect((await s.sh(`cat '${join(s.data, 'k3xq9a', 'tree', 'victim')}'`)).code).not.toBe(0)

    const own = await s.sh(
      'cat file.txt && echo new > new.txt && mkdir -p sub/deeper && mv new.txt sub/deeper/ && ' +
        'ln sub/deeper/new.txt hard && ln -s file.txt soft && : > file.txt && rm -r sub && cat hard soft',
    )
    expect(own.stderr).toBe('')
    expect(own).toMatchObject({code: 0, stdout: 'in the tree\nnew\n'})
    expect(read(join(s.tree, 'hard'))).toBe('new\n')
  })

  it('can write /dev/null and /tmp', async () => {
    const s = sandbox('dev-tmp')
    const tmp = `/tmp/hmm-helper-test-${process.pid}-${Date.now()}`
    try {
      const r = await s.sh(`echo x > /dev/null && echo y > ${tmp} && cat ${tmp}`)
      expect(r).toMatchObject({code: 0, stdout: 'y\n'})
    } finally {
      rmSync(tmp, {force: true})
    }
  })

  it('cannot gain privileges: NoNewPrivs is 1', async () => {
    const s = sandbox('nnp')
    const r = await s.sh('grep NoNewPrivs /proc/self/status')
    expect(r.stdout).toMatch(/^NoNewPrivs:\s+1\n$/)
  })

  it.skipIf(abi() < 6)('cannot signal a process outside its sandbox (Landlock ABI 6+ scopes signals)', async () => {
    const s = sandbox('signal')
    const outsider = spawn('sleep', ['30'], {stdio: 'ignore'})
    try {
      const r = await s.sh(`kill -0 ${outsider.pid}`)
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(/not permitted/i)
      expect((await s.sh(`kill -TERM ${outsider.pid}`)).code).not.toBe(0)
      expect(outsider.exitCode).toBe(null)
      // its own children it may signal
      const own = await s.sh('sleep 10 & kill $! && wait $!; echo $?')
      expect(own.stdout).toBe('143\n')
    } finally {
      outsider.kill()
    }
  })

  it.skipIf(abi() < 6)('cannot connect to an abstract unix socket made outside, while its own work (Landlock ABI 6+)', async () => {
    const s = sandbox('abstract')
    const name = `hmm-test-${process.pid}-${Date.now()}`
    const server = spawn('python3', ['-c', ABSTRACT_SERVER, name], {stdio: ['ignore', 'pipe', 'inherit']})
    try {
      await new Promise(ready => server.stdout!.once('data', ready))
      expect((await s.sh(`python3 -c ${sq(ABSTRACT_CONNECT)} ${name}`)).stdout).toBe('EPERM\n')
      expect((await s.sh(`python3 -c ${sq(ABSTRACT_OWN)}`)).stdout).toBe('own ok\n')
      // and the same connection from outside works: the server was listening
      expect(spawnSync('python3', ['-c', ABSTRACT_CONNECT, name], {encoding: 'utf8'}).stdout).toBe('connected\n')
    } finally {
      server.kill()
    }
  })

  it('can list / and the directory above a hidden path', async () => {
    const s = sandbox('list')
    const root = await s.sh('ls /')
    expect(root.code).toBe(0)
    expect(root.stdout.split('\n')).toContain('usr')
    const home = await s.sh(`ls -a '${s.home}'`)
    expect(home.code).toBe(0)
    expect(home.stdout.split('\n')).toEqual(expect.arrayContaining(['.ssh', '.aws', 'notes.txt']))
  })

  it("can list a hidden directory's names but not read its files (by design)", async () => {
    const s = sandbox('list-hidden')
    const r = await s.sh(`ls '${join(s.home, '.ssh')}' && cat '${join(s.home, '.ssh', 'id_rsa')}'`)
    expect(r.stdout).toBe('id_rsa\n')
    expect(r.code).not.toBe(0)
  })

  it('cannot make files beside a hidden path, where it may only read', async () => {
    const s = sandbox('beside-hidden')
    expect((await s.sh(`touch '${join(s.home, 'new')}'`)).code).not.toBe(0)
    expect((await s.sh(`echo pwned > '${join(s.home, 'notes.txt')}'`)).code).not.toBe(0)
    expect(existsSync(join(s.home, 'new'))).toBe(false)
    expect(read(join(s.home, 'notes.txt'))).toBe('notes\n')
  })

  const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0
  it.skipIf(!hasScript || abi() < 5)('keeps terminals working: ioctls on a tty opened inside (needs script(1), ABI 5+)', async () => {
    const s = sandbox('pty')
    const lock = join(s.data, 'k3xq9a', 'lock')
    const q = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`
    const inner = [
      helper,
      'exec',
      '--lock',
      lock,
      '--read',
      '/',
      '--write',
      s.tree,
      '--dev',
      '/dev',
      '--',
      'sh',
      '-c',
      'stty -a </dev/tty >/dev/null && echo tty-ok',
    ]
      .map(q)
      .join(' ')
    const r = spawnSync('script', ['-qec', inner, '/dev/null'], {encoding: 'utf8', cwd: s.tree})
    expect(r.stdout).toContain('tty-ok')
    expect(r.status).toBe(0)
  })
})
