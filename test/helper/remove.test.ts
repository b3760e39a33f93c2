// `hmm-helper remove DIR` deletes a workspace's directory and nothing else:
// every kind of entry, directories the owner made unreadable or read-only,
// trees deeper than PATH_MAX with a bounded number of descriptors, and never
// anything outside, even while a process swaps directories for links.

import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {preloading} from '../compile.js'
import {buildSwapAtOpen, buildSwapAtUnlink, buildSwapper, killSwappers} from '../swapper.js'
import {helper, run, world} from './support.js'

const isRoot = process.getuid?.() === 0
const NOT_REMOVED = 3

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function sh(script: string, cwd: string): void {
  const r = spawnSync('sh', ['-c', script], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`${script}: ${r.stderr}`)
}

/** A directory outside the tree with files the tree links to. */
function outside(dir: string): {dir: string; file: string; names: string[]} {
  const out = join(dir, 'outside')
  mkdirSync(out)
  const names = Array.from({length: 10}, (_, i) => `v${i}`)
  for (const name of names) writeFileSync(join(out, name), `${name}\n`)
  chmodSync(out, 0o755)
  return {dir: out, file: join(out, 'v0'), names}
}

function untouched(out: {dir: string; names: string[]}): void {
  expect(readdirSync(out.dir).sort()).toEqual([...out.names].sort())
  for (const name of out.names) expect(readFileSync(join(out.dir, name), 'utf8')).toBe(`${name}\n`)
  expect(statSync(out.dir).mode & 0o7777).toBe(0o755)
  expect(statSync(join(out.dir, 'v0')).mode & 0o7777).toBe(0o644)
}

describe('hmm-helper remove', () => {
  it('removes every kind of entry, and read-only and unreadable directories, without touching what links point to', async () => {
    const dir = world('remove-kinds')
    const out = outside(dir)
    const tree = join(dir, 'ws')
    mkdirSync(join(tree, 'a', 'b', 'c'), {recursive: true})
    writeFileSync(join(tree, 'a', 'file'), 'x')
    writeFileSync(join(tree, 'a', 'b', 'locked-file'), 'x')
    chmodSync(join(tree, 'a', 'b', 'locked-file'), 0)
    symlinkSync(out.dir, join(tree, 'a', 'dir-link'))
    symlinkSync(out.file, join(tree, 'a', 'b', 'file-link'))
    symlinkSync('../../../outside', join(tree, 'a', 'b', 'relative-link'))
    symlinkSync('nowhere', join(tree, 'dangling'))
    linkSync(out.file, join(tree, 'a', 'hard-link'))
    sh('mkfifo a/fifo a/b/c/fifo', tree)
    const server = createServer()
    await new Promise<void>(ok => server.listen(join(tree, 'a', 'sock'), ok))
    for (const [rel, mode] of [
      ['ro', 0o555],
      ['none', 0o000],
      ['search-only', 0o111],
      ['write-only', 0o333],
      ['a/b/c', 0o500],
      ['a/b', 0o000],
    ] as const) {
      const p = join(tree, rel)
      mkdirSync(p, {recursive: true})
      if (!rel.startsWith('a/')) {
        mkdirSync(join(p, 'inner'))
        writeFileSync(join(p, 'inner', 'f'), 'x')
        writeFileSync(join(p, 'f'), 'x')
        chmodSync(join(p, 'inner'), 0o555)
      }
      chmodSync(p, mode)
    }
    chmodSync(tree, 0o555)

    const r = await run(['remove', tree])
    server.close()
    expect(r).toMatchObject({code: 0, stderr: ''})
    expect(existsSync(tree)).toBe(false)
    untouched(out)
    expect(statSync(out.file).nlink).toBe(1)
  })

  it('removes a link given as DIR, not what it points to; a missing DIR is no error', async () => {
    const dir = world('remove-link')
    const out = outside(dir)
    symlinkSync(out.dir, join(dir, 'ws'))
    expect(await run(['remove', join(dir, 'ws')])).toMatchObject({code: 0, stderr: ''})
    expect(lstatSync(join(dir, 'ws'), {throwIfNoEntry: false})).toBeUndefined()
    untouched(out)
    symlinkSync(out.dir, join(dir, 'ws'))
    expect(await run(['remove', `${join(dir, 'ws')}/`])).toMatchObject({code: 0, stderr: ''})
    untouched(out)
    expect(await run(['remove', join(dir, 'missing')])).toMatchObject({code: 0, stderr: ''})
    expect(await run(['remove', join(dir, 'missing', 'below')])).toMatchObject({code: 0, stderr: ''})
  })

  it('refuses what is not one directory to remove', async () => {
    for (const args of [['remove'], ['remove', 'a', 'b'], ['remove', '/'], ['remove', '.'], ['remove', 'x/..']]) {
      const r = await run(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/^(usage: hmm-helper remove DIR|hmm-helper: remove: refusing to remove .*)\n$/)
    }
  })

  it('removes a tree deeper than PATH_MAX with at most about 64 descriptors, read-only directories on the way', () => {
    const dir = world('remove-deep')
    const tree = join(dir, 'ws')
    mkdirSync(tree)
    const name = 'd'.repeat(30)
    // 600 levels of 31 bytes: 18,600 bytes of path, over four times PATH_MAX.
    // By relative names from the directory above: no path of 18,600 bytes can be used.
    const cwd = process.cwd()
    process.chdir(tree)
    try {
      for (let i = 0; i < 600; i++) {
        mkdirSync(name)
        process.chdir(name)
        writeFileSync('f', 'x')
        if (i % 50 === 7) chmodSync('..', 0o555)
      }
    } finally {
      process.chdir(cwd)
    }
    // 64 kept open, the anchor, stdio, the one reading: 100 is room enough, 600 is not.
    const r = spawnSync('sh', ['-c', 'ulimit -n 100 && exec "$0" remove "$1"', helper, tree], {encoding: 'utf8'})
    expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''})
    expect(existsSync(tree)).toBe(false)
  })

  it('never deletes outside the tree when a directory is swapped for a link outside between its look and its opening', () => {
    const dir = world('remove-at-open')
    const out = outside(dir)
    const preload = buildSwapAtOpen(dir)
    const tree = join(dir, 'ws')
    for (let i = 0; i < 10; i++) {
      mkdirSync(join(tree, `d${i}`, 'sub'), {recursive: true})
      for (const name of out.names) writeFileSync(join(tree, `d${i}`, name), 'inside')
      writeFileSync(join(tree, `d${i}`, 'sub', 'f'), 'inside')
      symlinkSync(out.dir, join(tree, `l${i}`))
    }
    chmodSync(join(tree, 'd0'), 0o000)
    const r = spawnSync(helper, ['remove', tree], {encoding: 'utf8', ...preloading(preload)})
    expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''})
    expect(existsSync(tree)).toBe(false)
    untouched(out)
  })

  it('removes a link that is a directory only as it is unlinked (EISDIR), and such a directory, never what links point to', () => {
    const dir = world('remove-at-unlink')
    const out = outside(dir)
    const preload = buildSwapAtUnlink(dir)
    for (const mode of ['back', 'stay']) {
      const tree = join(dir, `ws-${mode}`)
      mkdirSync(tree)
      for (let i = 0; i < 10; i++) symlinkSync(out.dir, join(tree, `l${i}`))
      const r = spawnSync(helper, ['remove', tree], {encoding: 'utf8', ...preloading(preload, {...process.env, SWAP_AT_UNLINK: mode})})
      expect({mode, status: r.status, stderr: r.stderr}).toEqual({mode, status: 0, stderr: ''})
      expect(existsSync(tree)).toBe(false)
      untouched(out)
    }
  })

  it('never deletes outside the tree while a process swaps its directories for links outside, and removes it all once that has stopped', async () => {
    const dir = world('remove-race')
    const out = outside(dir)
    const swapper = buildSwapper(dir)
    try {
      for (let round = 0; round < 12; round++) {
        const tree = join(dir, `ws${round}`)
        mkdirSync(join(tree, 'proj'), {recursive: true})
        const mode = round % 2 ? 'toggle' : 'inotify'
        sh(`'${swapper}' "$PWD" '${out.dir}' 40 ${mode}`, join(tree, 'proj'))
        const r = await run(['remove', tree])
        // Racing, it removes everything or gives up on a name the swapper keeps changing (its one failure for that:
        // a link that was a directory as it was unlinked is looked at again, see the case above); it never follows a link.
        if (r.code === 0) expect({round, stderr: r.stderr}).toEqual({round, stderr: ''})
        else {
          expect({round, code: r.code}).toEqual({round, code: NOT_REMOVED})
          expect(r.stderr).toMatch(new RegExp(`^hmm-helper: remove: ${escapeRegExp(tree)}/proj/[dl]\\d+: kept changing while being removed\n$`))
        }
        untouched(out)
        // Once the swapper has stopped, the rest goes.
        killSwappers(swapper)
        expect({round, ...(await run(['remove', tree]))}).toMatchObject({round, code: 0, stderr: ''})
        expect(existsSync(tree)).toBe(false)
        untouched(out)
      }
    } finally {
      killSwappers(swapper)
    }
  })

  it.skipIf(!isRoot)('leaves a mount point inside alone, says so, removes the rest, and exits 3 [mounting needs root]', async () => {
    const dir = world('remove-mount')
    const tree = join(dir, 'ws')
    mkdirSync(join(tree, 'mnt'), {recursive: true})
    writeFileSync(join(tree, 'other'), 'x')
    sh('mount -t tmpfs none mnt && echo kept > mnt/f', tree)
    try {
      const r = await run(['remove', tree])
      expect(r.code).toBe(NOT_REMOVED)
      expect(r.stderr).toBe(`hmm-helper: remove: ${tree}/mnt: on another file system (a mount point?), left alone\n`)
      expect(readFileSync(join(tree, 'mnt', 'f'), 'utf8')).toBe('kept\n')
      expect(existsSync(join(tree, 'other'))).toBe(false)
    } finally {
      sh('umount mnt', tree)
    }
  })

  it.skipIf(isRoot)('says what it could not remove and exits 3: DIR in a directory the user cannot write [root can]', async () => {
    const dir = world('remove-denied')
    const tree = join(dir, 'parent', 'ws')
    mkdirSync(join(tree, 'a'), {recursive: true})
    writeFileSync(join(tree, 'a', 'f'), 'x')
    chmodSync(join(dir, 'parent'), 0o555)
    try {
      const r = await run(['remove', tree])
      expect(r.code).toBe(NOT_REMOVED)
      expect(r.stderr).toBe(`hmm-helper: remove: ${tree}: Permission denied\n`)
      expect(readdirSync(tree)).toEqual([])
    } finally {
      chmodSync(join(dir, 'parent'), 0o755)
    }
  })
})
