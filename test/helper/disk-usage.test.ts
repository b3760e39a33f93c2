// `hmm-helper disk-usage DIR...` (hmm ls -l's SIZE): the blocks allocated
// under each directory as du counts them (a hard-linked file once, a link as
// a link, a sparse file by what it holds), 0 for a directory that is not
// there, and never anything outside, even while a process swaps its
// directories for links to a directory outside.
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {linkSync, mkdirSync, symlinkSync, truncateSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildSwapper, killSwappers} from '../swapper.js'
import {helper, run, world} from './support.js'

const MiB = 1024 * 1024

/** A directory outside the measured one, holding 8 MiB of random bytes in files named v0..v9. */
function outside(dir: string): string {
  const out = join(dir, 'outside')
  mkdirSync(out)
  for (let i = 0; i < 10; i++) writeFileSync(join(out, `v${i}`), randomBytes(i === 0 ? 8 * MiB : 16))
  return out
}

describe('hmm-helper disk-usage', () => {
  it('counts what du counts: each inode once, links not followed, a sparse file by its blocks; a missing directory is 0', async () => {
    const dir = world('usage')
    const out = outside(dir)
    const tree = join(dir, 'ws')
    mkdirSync(join(tree, 'a', 'b'), {recursive: true})
    writeFileSync(join(tree, 'a', 'data'), randomBytes(MiB))
    linkSync(join(tree, 'a', 'data'), join(tree, 'a', 'b', 'again'))
    symlinkSync(out, join(tree, 'out'))
    symlinkSync(join(out, 'v0'), join(tree, 'a', 'v0'))
    writeFileSync(join(tree, 'sparse'), '')
    truncateSync(join(tree, 'sparse'), 1024 * MiB)
    const r = await run(['disk-usage', tree, join(dir, 'nothing-here')])
    const du = spawnSync('du', ['-s', '-B1', tree], {encoding: 'utf8'}).stdout.split('\t')[0]
    expect(r).toMatchObject({code: 0, stdout: `${du}\n0\n`, stderr: ''})
    expect(Number(du)).toBeGreaterThan(MiB)
    expect(Number(du)).toBeLessThan(2 * MiB)
  })

  it('never counts what lies outside while a process swaps its directories for links outside, and ends every time', async () => {
    const dir = world('usage-race')
    const out = outside(dir)
    const swapper = buildSwapper(dir)
    const tree = join(dir, 'ws')
    mkdirSync(tree)
    try {
      const started = spawnSync('sh', ['-c', `'${swapper}' "$PWD" '${out}' 40 toggle`], {cwd: tree, encoding: 'utf8'})
      expect(started.status, started.stderr).toBe(0)
      for (let round = 0; round < 50; round++) {
        const r = spawnSync(helper, ['disk-usage', tree], {encoding: 'utf8'})
        expect({round, status: r.status, stderr: r.stderr}).toEqual({round, status: 0, stderr: ''})
        expect(Number(r.stdout)).toBeLessThan(8 * MiB)
      }
    } finally {
      killSwappers(swapper)
    }
  })
})
