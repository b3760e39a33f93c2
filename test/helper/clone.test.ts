// `hmm-helper clone` must make what `cp -a --reflink=auto` makes: every kind
// of entry, modes (set-user-ID too), owners, nanosecond mtimes, link targets,
// hard links kept as hard links, extended attributes, sparse files kept
// sparse (the same blocks allocated), whatever the number of threads.
// Sockets are the one difference: the helper leaves them out and says so.

import {spawn, spawnSync} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {collect, helper, run, world} from './support.js'

const isRoot = process.getuid?.() === 0

function sh(script: string, cwd: string): void {
  const r = spawnSync('sh', ['-c', script], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`${script}: ${r.stderr}`)
}

/** Everything cp -a keeps about one entry, minus what no copy can keep
 * (inode numbers, ctime); hard links as the group of names of one inode. */
interface Entry {
  type: string
  mode: string
  uid: number
  gid: number
  mtime: string
  size?: number
  target?: string
  sha?: string
  rdev?: number
  links?: string[]
  /** Disk blocks (512 bytes) a regular file takes: holes take none. */
  blocks?: number
  /** Extended attributes, name -> value in hex. */
  xattrs?: Record<string, string>
}

/** Every entry's extended attributes (links not followed), by relative path; Node cannot read them, Python can. */
function xattrsOf(root: string): Map<string, Record<string, string>> {
  const script = `
import json, os, sys
root = sys.argv[1]
out = {}
def look(rel):
    path = os.path.join(root, rel) if rel else root
    names = os.listxattr(path, follow_symlinks=False)
    if names:
        out[rel or '.'] = {n: os.getxattr(path, n, follow_symlinks=False).hex() for n in names}
    if os.path.isdir(path) and not os.path.islink(path):
        for name in os.listdir(path):
            look(os.path.join(rel, name) if rel else name)
look('')
print(json.dumps(out))
`
  const r = spawnSync('python3', ['-c', script, root], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`reading extended attributes: ${r.stderr}`)
  return new Map(Object.entries(JSON.parse(r.stdout) as Record<string, Record<string, string>>))
}

/**
 * Sets extended attributes (path, name, value), not following links, in one
 * python3 (its start-up is slow on a loaded machine); for each, whether it
 * was set (false where the kernel refused it: EPERM, ENOTSUP, EACCES).
 */
function setXattrs(attributes: (readonly [string, string, Buffer])[]): boolean[] {
  const script = `
import errno, json, os, sys
done = []
for path, name, value in json.loads(sys.argv[1]):
    try:
        os.setxattr(path, name, bytes.fromhex(value), follow_symlinks=False)
        done.append(True)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EACCES): raise
        done.append(False)
print(json.dumps(done))
`
  const given = JSON.stringify(attributes.map(([path, name, value]) => [path, name, value.toString('hex')]))
  const r = spawnSync('python3', ['-c', script, given], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`setting extended attributes: ${r.stderr}`)
  return JSON.parse(r.stdout) as boolean[]
}

function snapshot(root: string): Map<string, Entry> {
  const out = new Map<string, Entry>()
  const inodes = new Map<bigint, string[]>()
  const walk = (rel: string) => {
    const p = rel ? join(root, rel) : root
    const st = lstatSync(p, {bigint: true})
    const mode = Number(st.mode)
    const type = st.isDirectory()
      ? 'dir'
      : st.isFile()
        ? 'file'
        : st.isSymbolicLink()
          ? 'link'
          : st.isFIFO()
            ? 'fifo'
            : st.isSocket()
              ? 'socket'
              : st.isCharacterDevice()
                ? 'char'
                : 'block'
    const e: Entry = {
      type,
      mode: (mode & 0o7777).toString(8),
      uid: Number(st.uid),
      gid: Number(st.gid),
      mtime: st.mtimeNs.toString(),
    }
    if (type === 'file') {
      e.size = Number(st.size)
      e.blocks = Number(st.blocks)
      e.sha = createHash('sha256').update(readFileSync(p)).digest('hex')
    }
    if (type === 'link') e.target = readlinkSync(p)
    if (type === 'char' || type === 'block') e.rdev = Number(st.rdev)
    if (type !== 'dir' && st.nlink > 1n) {
      const names = inodes.get(st.ino) ?? []
      names.push(rel)
      inodes.set(st.ino, names)
    }
    out.set(rel || '.', e)
    if (type === 'dir') for (const name of readdirSync(p).sort()) walk(rel ? join(rel, name) : name)
  }
  walk('')
  for (const names of inodes.values()) for (const n of names) out.get(n)!.links = [...names].sort()
  for (const [rel, xattrs] of xattrsOf(root)) out.get(rel)!.xattrs = xattrs
  return out
}

const without = (m: Map<string, Entry>, ...names: string[]) => {
  const c = new Map(m)
  for (const n of names) c.delete(n)
  return c
}

interface Source {
  src: string
  root: string
  server: Server
  hasDevice: boolean
  /** security.* attributes could be set (root): the clone must keep them. */
  hasSecurityXattr: boolean
  /** non-directory entries the helper makes, and the bytes of distinct files */
  files: number
  bytes: number
}

const NAMES = ['with space', 'new\nline', '-dash', 'ünïcødé ☃', 'tab\there', '*star?', 'quote\'"']

async function makeSource(name: string): Promise<Source> {
  const root = world(name)
  const src = join(root, 'src')
  mkdirSync(src)
  const file = (rel: string, content: Buffer | string, mode = 0o644) => {
    writeFileSync(join(src, rel), content)
    chmodSync(join(src, rel), mode)
  }
  for (const d of ['a', 'b/c', 'deep/1/2/3/4/5/6', 'empty', 'many/sub1', 'many/sub2', 'readonly', 'sticky', 'setgid'])
    mkdirSync(join(src, d), {recursive: true})
  file('zero', '')
  file('one', 'x')
  file('a/4095', randomBytes(4095))
  file('a/4096', randomBytes(4096))
  file('a/65537', randomBytes(65537))
  file('b/c/1mb-plus', randomBytes(1024 * 1024 + 17))
  file('big', randomBytes(3 * 1024 * 1024 + 5))
  file('tool.sh', '#!/bin/sh\necho tool\n', 0o755)
  file('setuid', 'pretend binary', 0o4755)
  file('setgid-file', 'pretend binary', 0o2711)
  file('private', 'mine', 0o600)
  file('deep/1/2/3/4/5/6/leaf', 'leaf\n')
  file('readonly/inside', 'ro\n', 0o444)
  for (const n of NAMES) file(n, `named ${n}\n`)
  mkdirSync(join(src, 'a', NAMES[1]))
  file(join('a', NAMES[1], NAMES[3]), 'nested odd names\n')
  // enough entries for a directory to be split into chunks among workers
  for (let i = 0; i < 300; i++) file(`many/f${i}`, `file ${i}\n`.repeat(i % 7))
  for (let i = 0; i < 40; i++) file(`many/sub${1 + (i % 2)}/g${i}`, randomBytes(i * 37))
  sh(
    [
      'ln -s a/4096 rel-link',
      `ln -s '${join(src, 'one')}' abs-link`,
      'ln -s no/such/thing dangling',
      'ln -s a dir-link',
      'ln -s loop loop',
      'ln a/65537 b/c/hard-2', // two names in different directories
      'ln one hard-one && ln one a/hard-one-2', // three names
      'ln -P rel-link hard-symlink', // a hard link to a symlink
      'mkfifo fifo && chmod 640 fifo && ln -P fifo hard-fifo',
      'mkfifo b/fifo2',
    ].join(' && '),
    src,
  )
  // Sparse files: holes at the start, in the middle and at the end; and one that is all hole.
  sh(
    [
      'truncate -s 32M sparse',
      'dd if=/dev/urandom of=sparse bs=4096 count=3 seek=2560 conv=notrunc status=none',
      'dd if=/dev/urandom of=sparse bs=4096 count=1 seek=7000 conv=notrunc status=none',
      'truncate -s 16M a/all-hole',
      'dd if=/dev/urandom of=b/data-then-hole bs=65536 count=2 status=none && truncate -s 10M b/data-then-hole',
    ].join(' && '),
    src,
  )
  // Extended attributes: on files, directories, a hard-linked file, a read-only directory; binary and empty values.
  const userAttributes = [
    ['one', 'user.comment', Buffer.from('kept by cp -a')],
    ['a', 'user.dir', Buffer.from('a directory')],
    ['a/65537', 'user.binary', Buffer.from([0, 1, 2, 255, 10, 0])],
    ['a/65537', 'user.empty', Buffer.alloc(0)],
    ['readonly', 'user.ro', Buffer.from('set before the mode')],
    ['sparse', 'user.sparse', Buffer.from('x')],
    ['.', 'user.top', Buffer.from('top')],
  ] as const
  // security.* where permitted (root), on a file and on a symbolic link; the clone keeps them where it may.
  const securityAttributes = [
    ['tool.sh', 'security.hmm-test', Buffer.from('label')],
    ['rel-link', 'security.hmm-test', Buffer.from('on a link')],
  ] as const
  const set = setXattrs([...userAttributes, ...securityAttributes].map(([rel, name, value]) => [join(src, rel), name, value] as const))
  userAttributes.forEach(([, name], i) => {
    if (!set[i]) throw new Error(`this file system takes no ${name}`)
  })
  const hasSecurityXattr = set.slice(userAttributes.length).every(Boolean)
  let hasDevice = false
  if (isRoot) {
    sh('chown 1234:5678 private && chown -h 4321:8765 rel-link && chown 99:99 a', src)
    hasDevice = spawnSync('mknod', [join(src, 'null-dev'), 'c', '1', '3']).status === 0
  }
  const server = createServer()
  await new Promise<void>(ok => server.listen(join(src, 'sock'), ok))
  // modes of directories last (a read-only directory would stop the rest)
  chmodSync(join(src, 'sticky'), 0o1777)
  chmodSync(join(src, 'setgid'), 0o2755)
  chmodSync(join(src, 'readonly'), 0o555)
  chmodSync(src, 0o750)
  // a distinct old nanosecond mtime for every entry, directories included
  const all = spawnSync('find', ['.', '-print0'], {cwd: src, encoding: 'utf8'}).stdout.split('\0').filter(Boolean)
  const script = all
    .map((p, i) => `touch -h -d @${1000000000 + i * 3607}.${String(123456789 - i * 1000).padStart(9, '0')} '${p.replaceAll("'", `'\\''`)}'`)
    .join('\n')
  sh(script, src)

  const snap = snapshot(src)
  let files = 0
  let bytes = 0
  const seen = new Set<string>()
  for (const [rel, e] of snap) {
    if (e.type === 'dir' || e.type === 'socket') continue
    files++
    if (e.type !== 'file') continue
    const key = e.links ? e.links[0] : rel
    if (seen.has(key)) continue
    seen.add(key)
    bytes += e.size!
  }
  return {src, root, server, hasDevice, hasSecurityXattr, files, bytes}
}

async function clone(src: string, dst: string, ...opts: string[]) {
  return run(['clone', ...opts, src, dst])
}

describe('hmm-helper clone', () => {
  it('makes what cp -a --reflink=auto makes, except sockets, which it reports', async () => {
    const s = await makeSource('clone-cp')
    try {
      const mine = join(s.root, 'by-helper')
      const cps = join(s.root, 'by-cp')
      const r = await clone(s.src, mine)
      expect(r.stderr).toBe(`hmm: skipped socket ${join(s.src, 'sock')}\n`)
      expect(r.code).toBe(0)
      const cp = spawnSync('cp', ['-a', '--reflink=auto', s.src, cps], {encoding: 'utf8'})
      expect(cp.stderr).toBe('')

      const source = snapshot(s.src)
      const helperResult = snapshot(mine)
      const cpResult = snapshot(cps)
      expect(source.get('sock')?.type).toBe('socket')
      expect(cpResult.get('sock')?.type).toBe('socket')
      expect(helperResult.has('sock')).toBe(false)
      expect(helperResult).toEqual(without(cpResult, 'sock'))
      expect(helperResult).toEqual(without(source, 'sock'))

      // spot checks, so a bug shared by the snapshot cannot hide everything
      const get = (rel: string) => helperResult.get(rel)!
      expect(get('setuid').mode).toBe('4755')
      expect(get('sticky').mode).toBe('1777')
      expect(get('setgid').mode).toBe('2755')
      expect(get('.').mode).toBe('750')
      expect(get('loop')).toMatchObject({type: 'link', target: 'loop'})
      expect(get('dir-link')).toMatchObject({type: 'link', target: 'a'})
      expect(get('b/c/hard-2').links).toEqual(['a/65537', 'b/c/hard-2'])
      expect(get('one').links).toEqual(['a/hard-one-2', 'hard-one', 'one'])
      expect(get('hard-symlink').links).toEqual(['hard-symlink', 'rel-link'])
      expect(get('hard-fifo')).toMatchObject({type: 'fifo', mode: '640', links: ['fifo', 'hard-fifo']})
      expect(get(NAMES[1]).sha).toBe(source.get(NAMES[1])!.sha)
      expect(get('deep/1/2/3/4/5/6/leaf').mtime).toBe(source.get('deep/1/2/3/4/5/6/leaf')!.mtime)
      expect(get('a').mtime).toMatch(/\d{9}$/)
      expect(get('a').mtime).not.toMatch(/000000$/)
      if (isRoot) {
        expect(get('private')).toMatchObject({uid: 1234, gid: 5678, mode: '600'})
        expect(get('rel-link')).toMatchObject({uid: 4321, gid: 8765})
        expect(get('a')).toMatchObject({uid: 99, gid: 99})
      }
      if (s.hasDevice) expect(get('null-dev')).toMatchObject({type: 'char', rdev: source.get('null-dev')!.rdev})
      expect(get('sparse')).toMatchObject({size: 32 * 1024 * 1024, xattrs: {'user.sparse': '78'}})
      expect(get('sparse').blocks).toBeLessThan(1024)
      expect(get('a/all-hole').blocks).toBe(0)
      expect(get('a/65537').xattrs).toEqual({'user.binary': '000102ff0a00', 'user.empty': ''})
      expect(get('a/hard-one-2').xattrs).toEqual({'user.comment': Buffer.from('kept by cp -a').toString('hex')})
      expect(get('readonly').xattrs).toEqual({'user.ro': Buffer.from('set before the mode').toString('hex')})
      expect(get('.').xattrs).toEqual({'user.top': '746f70'})
      if (s.hasSecurityXattr) {
        expect(get('tool.sh').xattrs).toEqual({'security.hmm-test': Buffer.from('label').toString('hex')})
        expect(get('rel-link').xattrs).toEqual({'security.hmm-test': Buffer.from('on a link').toString('hex')})
      }
    } finally {
      s.server.close()
    }
  })

  it('makes the same tree with 1 thread and with 4', async () => {
    const s = await makeSource('clone-threads')
    try {
      const results = []
      for (const threads of ['1', '4', '64']) {
        const dst = join(s.root, `t${threads}`)
        const r = await clone(s.src, dst, '--threads', threads)
        expect(r.code, r.stderr).toBe(0)
        results.push(snapshot(dst))
      }
      const expected = without(snapshot(s.src), 'sock')
      for (const r of results) expect(r).toEqual(expected)
    } finally {
      s.server.close()
    }
  })

  it('answers --stat-pairs as stat-pairs would right after, for files of one name; "missing" for the rest', async () => {
    const s = await makeSource('clone-stat-pairs')
    try {
      const dst = join(s.root, 'copy')
      const source = snapshot(s.src)
      const paths = [...source.keys()].filter(rel => rel !== '.').concat(['no/such/file'])
      const input = Buffer.from(paths.map(p => `${p}\0`).join(''))
      const cloned = spawnSync(helper, ['clone', '--stat-pairs', s.src, dst], {input})
      expect(cloned.status, cloned.stderr.toString()).toBe(0)
      const after = spawnSync(helper, ['stat-pairs', s.src, dst], {input})
      expect(after.status).toBe(0)
      const RECORD = 2 * 41
      expect(cloned.stdout.length).toBe(paths.length * RECORD)
      let answered = 0
      paths.forEach((rel, i) => {
        const mine = cloned.stdout.subarray(i * RECORD, (i + 1) * RECORD)
        const e = source.get(rel)
        if (e?.type === 'file' && !e.links) {
          expect(mine.equals(after.stdout.subarray(i * RECORD, (i + 1) * RECORD)), rel).toBe(true)
          expect([mine[0], mine[41]], rel).toEqual([1, 1])
          answered++
        } else {
          expect([mine[0], mine[41]], rel).toEqual([0, 0])
        }
      })
      expect(answered).toBeGreaterThan(300)
    } finally {
      s.server.close()
    }
  })

  it('reports progress on --progress-fd, ending with every file and byte', async () => {
    const s = await makeSource('clone-progress')
    try {
      const dst = join(s.root, 'dst')
      const child = spawn(helper, ['clone', '--progress-fd', '3', s.src, dst], {stdio: ['ignore', 'pipe', 'pipe', 'pipe']})
      const r = await collect(child)
      expect(r.code).toBe(0)
      const lines = r.report.split('\n')
      expect(lines.pop()).toBe('')
      expect(lines.length).toBeGreaterThan(0)
      let last = [0, 0]
      for (const line of lines) {
        expect(line).toMatch(/^P \d+ \d+$/)
        const now = line.split(' ').slice(1).map(Number)
        expect(now[0]).toBeGreaterThanOrEqual(last[0])
        expect(now[1]).toBeGreaterThanOrEqual(last[1])
        last = now
      }
      expect(last).toEqual([s.files, s.bytes])
    } finally {
      s.server.close()
    }
  })

  it('refuses a destination that exists, and leaves it alone', async () => {
    const w = world('clone-exists')
    mkdirSync(join(w, 'src'))
    writeFileSync(join(w, 'src', 'f'), 'f')
    mkdirSync(join(w, 'dst'))
    writeFileSync(join(w, 'dst', 'keep'), 'keep')
    const r = await clone(join(w, 'src'), join(w, 'dst'))
    expect(r).toMatchObject({code: 1, stderr: `hmm: clone: ${join(w, 'dst')}: File exists\n`})
    expect(readdirSync(join(w, 'dst'))).toEqual(['keep'])
  })

  it('fails with the path and the reason when the source or the parent of the destination is missing', async () => {
    const w = world('clone-missing')
    mkdirSync(join(w, 'src'))
    const noSrc = await clone(join(w, 'nope'), join(w, 'dst'))
    expect(noSrc).toMatchObject({code: 1, stderr: `hmm: clone: ${join(w, 'nope')}: No such file or directory\n`})
    const noParent = await clone(join(w, 'src'), join(w, 'no', 'dst'))
    expect(noParent).toMatchObject({code: 1, stderr: `hmm: clone: ${join(w, 'no', 'dst')}: No such file or directory\n`})
  })

  it('does not follow a source that is a symlink', async () => {
    const w = world('clone-src-link')
    mkdirSync(join(w, 'real'))
    sh('ln -s real link', w)
    const r = await clone(join(w, 'link'), join(w, 'dst'))
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^hmm: clone: .*link: /)
  })

  // The attacker's review 17, F1: as cp -p, a copy never has a set-ID bit of an owner or group it could not be given.
  it.skipIf(!isRoot)('keeps no set-user-ID without the owner, nor set-group-ID without the group: as another user, as root of a user namespace', async () => {
    // Under /var/tmp: the other user must reach it, which the suite's own directory may forbid.
    const w = mkdtempSync('/var/tmp/hmm-clone-setid-')
    try {
      chmodSync(w, 0o755)
      const src = join(w, 'src')
      mkdirSync(join(src, 'shared'), {recursive: true})
      writeFileSync(join(src, 'suid'), 'x')
      writeFileSync(join(src, 'sgid'), 'x')
      sh('chown 4321:4321 suid && chmod 4755 suid && chown 0:4321 sgid && chmod 2755 sgid && chown 4321:4321 shared && chmod 2775 shared && chmod 755 .', src)
      const modes = (dst: string) => Object.fromEntries(['suid', 'sgid', 'shared'].map(name => [name, (lstatSync(join(dst, name)).mode & 0o7777).toString(8)]))
      // Another user: owns the copies, of its own group. It runs a copy of the helper: the suite's may lie where only
      // its own user may search (CI's copy in a 0700 directory).
      const other = join(w, 'other')
      mkdirSync(other)
      sh(`chown 4322:4322 '${other}'`, w)
      const reachable = join(w, 'hmm-helper')
      copyFileSync(helper, reachable)
      chmodSync(reachable, 0o755)
      const asOther = await collect(spawn(reachable, ['clone', src, join(other, 'dst')], {uid: 4322, gid: 4322, stdio: ['ignore', 'pipe', 'pipe']}))
      expect(asOther.stderr).toBe('')
      expect(modes(join(other, 'dst'))).toEqual({suid: '755', sgid: '755', shared: '775'})
      // Root of a user namespace that maps root alone: 4321 is none of its ids; sgid keeps its owner, root.
      const inNamespace = await collect(spawn('unshare', ['--map-root-user', helper, 'clone', src, join(w, 'ns')], {stdio: ['ignore', 'pipe', 'pipe']}))
      expect(inNamespace.stderr).toBe('')
      expect(modes(join(w, 'ns'))).toEqual({suid: '755', sgid: '755', shared: '775'})
      expect(lstatSync(join(w, 'ns', 'sgid')).uid).toBe(0)
    } finally {
      rmSync(w, {recursive: true, force: true})
    }
  })

  it('refuses to clone a directory into itself', async () => {
    const w = world('clone-into-self')
    mkdirSync(join(w, 'src', 'sub'), {recursive: true})
    const r = await clone(join(w, 'src'), join(w, 'src', 'sub', 'dst'))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('cannot clone a directory into itself')
  })

  it.each([
    ['no arguments', []],
    ['one path', ['clone', '/x']],
    ['three paths', ['clone', '/x', '/y', '/z']],
    ['zero threads', ['clone', '--threads', '0', '/x', '/y']],
    ['too many threads', ['clone', '--threads', '65', '/x', '/y']],
    ['a closed progress descriptor', ['clone', '--progress-fd', '9', '/x', '/y']],
    ['an unknown flag', ['clone', '--fast', '/x', '/y']],
    ['an unknown mode', ['frobnicate']],
  ])('exits 2 with usage for %s', async (_, args) => {
    const r = await run(args, {reportPipe: false})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/usage: hmm-helper/)
  })
})
