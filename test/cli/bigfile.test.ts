// A file larger than max_file_size (issue 11, item 5): hmm does not read
// it (an 8 GB sparse file costs no disk but made every diff hash for
// minutes). Whether it was read is told by its access time, set in the
// past: a read moves it (relatime, as here: checked on a control file).
import {execa} from 'execa'
import {statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const PAST = '2000-01-01 00:00:00'
const atime = (path: string) => statSync(path).atimeMs

describe('a file larger than max_file_size', () => {
  it('is not read: diff, apply and rm say so in one line naming it', async () => {
    world = new World('bigfile')
    await world.gitRepo()
    const ws = await made(world, 'truncate -s 8G big.bin && mkdir -p deep && truncate -s 2G deep/also.bin && echo small > small.txt')
    const big = join(ws.tree, 'big.bin')
    const control = join(ws.tree, 'small.txt')
    await execa('touch', ['-a', '-d', PAST, big, join(ws.tree, 'deep/also.bin'), control])
    const before = atime(big)
    // Reading moves the access time on this file system (else this test could not tell).
    await execa('head', ['-c1', control])
    expect(atime(control)).not.toBe(before)

    const line = `hmm: workspace ${ws.label} has files larger than max_file_size (1 GiB), which hmm does not read: big.bin, deep/also.bin\n`
    for (const args of [['diff'], ['diff', '--stat'], ['apply', '--check'], ['apply'], ['rm', ws.id]]) {
      expect(await hmm(world, args)).toEqual({exitCode: 1, stdout: '', stderr: line})
    }
    expect(atime(big)).toBe(before)
    expect(atime(join(ws.tree, 'deep/also.bin'))).toBe(before)
    // Gone, the workspace is as usual again; rm -f never reads the files.
    await execa('rm', [big, join(ws.tree, 'deep/also.bin')])
    expect((await hmm(world, ['diff', '--stat'])).stdout).toContain('small.txt')
    expect((await hmm(world, ['rm', '-f', ws.id])).exitCode).toBe(0)
  })

  it("many files, each within max_file_size, more than max_read_size together, are not read either: diff, apply and rm say so in one line naming them, largest first (the attacker's eighth review, F10)", async () => {
    world = new World('bigfile-sum')
    await world.gitRepo()
    // 5 sparse files of 1000 MiB: no disk, but 5 GiB of hashing at every look without the bound (4 GiB by default).
    const ws = await made(world, 'for n in 1 2 3 4; do truncate -s 1000M big$n.bin; done && truncate -s 1001M big5.bin && echo small > small.txt')
    const bigs = [5, 1, 2, 3, 4].map(n => join(ws.tree, `big${n}.bin`))
    await execa('touch', ['-a', '-d', PAST, ...bigs])
    const before = atime(bigs[0])
    const line = `hmm: workspace ${ws.label} has 6 files larger than max_read_size (4 GiB) together, which hmm does not read: big5.bin, big1.bin, big2.bin, big3.bin, big4.bin, small.txt\n`
    for (const args of [['diff'], ['diff', '--stat'], ['apply', '--check'], ['rm', ws.id]]) {
      expect(await hmm(world, args)).toEqual({exitCode: 1, stdout: '', stderr: line})
    }
    for (const big of bigs) expect(atime(big)).toBe(before)
    // Gone, the workspace is as usual again.
    await execa('rm', bigs)
    expect((await hmm(world, ['diff', '--stat'])).stdout).toContain('small.txt')
    expect((await hmm(world, ['rm', '-f', ws.id])).exitCode).toBe(0)
  })

  it('is named also where a tracked directory became a file (its deleted entries lie beneath a file now)', async () => {
    world = new World('bigfile-shapes')
    await world.gitRepo()
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'max_file_size = "1 KiB"\n')
    world.file('d/a.py', 'a\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'd'])
    const ws = await made(world, 'rm -rf d && echo file > d && head -c 2048 /dev/zero > big.bin')
    const line = `hmm: workspace ${ws.label} has a file larger than max_file_size (1 KiB), which hmm does not read: big.bin\n`
    expect(await hmm(world, ['diff', '--stat'])).toEqual({exitCode: 1, stdout: '', stderr: line})
  })

  it('is set by max_file_size in the config file (bytes, or with a unit); a bad value is one line naming the file and the key', async () => {
    world = new World('bigfile-config')
    await world.gitRepo()
    const config = world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'max_file_size = "1 MiB"\n')
    const ws = await made(world, 'head -c 1048577 /dev/zero > over.bin && head -c 1048576 /dev/zero > at.bin')
    const line = `hmm: workspace ${ws.label} has a file larger than max_file_size (1 MiB), which hmm does not read: over.bin\n`
    expect(await hmm(world, ['diff', '--stat'])).toEqual({exitCode: 1, stdout: '', stderr: line})
    world.write(config, 'max_file_size = 1048577\n')
    const stat = await hmm(world, ['diff', '--stat'])
    expect(stat.stdout).toContain('over.bin')
    expect(stat.exitCode).toBe(0)
    for (const bad of ['max_file_size = "big"\n', 'max_file_size = 0\n', 'max_file_size = 1.5\n']) {
      world.write(config, bad)
      expect(await hmm(world, ['diff'])).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: 'hmm: ~/.config/hmm/config.toml: max_file_size: expected a size in bytes, or with a unit (KiB, MiB, GiB, TiB), e.g. "2 GiB"\n',
      })
    }
  })

  it('together, is set by max_read_size in the config file; a bad value is one line naming the file and the key', async () => {
    world = new World('bigfile-sum-config')
    await world.gitRepo()
    const config = world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'max_read_size = "2 MiB"\n')
    const ws = await made(world, 'head -c 1048576 /dev/zero > a.bin && head -c 1048576 /dev/zero > b.bin && echo c > c.txt')
    const line = `hmm: workspace ${ws.label} has 3 files larger than max_read_size (2 MiB) together, which hmm does not read: a.bin, b.bin, c.txt\n`
    expect(await hmm(world, ['diff', '--stat'])).toEqual({exitCode: 1, stdout: '', stderr: line})
    world.write(config, 'max_read_size = "3 MiB"\n')
    const stat = await hmm(world, ['diff', '--stat'])
    expect(stat.stdout).toContain('c.txt')
    expect(stat.exitCode).toBe(0)
    world.write(config, 'max_read_size = "big"\n')
    expect(await hmm(world, ['diff'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: 'hmm: ~/.config/hmm/config.toml: max_read_size: expected a size in bytes, or with a unit (KiB, MiB, GiB, TiB), e.g. "2 GiB"\n',
    })
  })
})
