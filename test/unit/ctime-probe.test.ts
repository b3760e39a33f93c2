// afterTreeMade's probe: whether every ctime stamped from now on is later
// than the tree's, so the command may start without waiting a clock tick.
import {execa} from 'execa'
import {readdirSync} from 'node:fs'
import {release} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ctimesLaterFromNow} from '../../src/git/first-index.js'
import {PROJECT, scratchDir} from '../world.js'

/** Linux 6.13 stamps a looked-at ctime finely on ext4, XFS, Btrfs and tmpfs (multigrain timestamps). */
const [major, minor] = release().split('.').map(Number)
const MULTIGRAIN = process.platform === 'linux' && (major > 6 || (major === 6 && minor >= 13))

describe('the ctime probe', () => {
  it.runIf(MULTIGRAIN)('says yes where the kernel stamps looked-at ctimes finely, and leaves nothing behind', () => {
    const dir = scratchDir('ctime-probe')
    expect(ctimesLaterFromNow(dir, Date.now())).toBe(true)
    expect(readdirSync(dir)).toEqual([])
  })

  it('says no when the instant to be later than has not come yet', () => {
    const dir = scratchDir('ctime-probe')
    expect(ctimesLaterFromNow(dir, Date.now() + 60_000)).toBe(false)
    expect(readdirSync(dir)).toEqual([])
  })

  it('says no where it cannot write', () => {
    expect(ctimesLaterFromNow(join(scratchDir('ctime-probe'), 'missing'), Date.now())).toBe(false)
  })

  // ramfs stamps ctimes from the coarse clock only; a user namespace of its own may mount one.
  it.runIf(process.platform === 'linux')('says no on a file system that stamps ctimes coarsely (ramfs)', async () => {
    const dir = scratchDir('ctime-probe')
    // The built module (npm install builds it): the probe runs in a process of the namespace.
    const module = join(PROJECT, 'dist', 'git', 'first-index.js')
    const probe = `import(${JSON.stringify(module)}).then(m => console.log(m.ctimesLaterFromNow(process.argv[1], Date.now() - 1)))`
    const script = `mount -t ramfs none "$1" && "$3" -e "$2" "$1"`
    const answers = []
    for (let round = 0; round < 3; round++) {
      const result = await execa('unshare', ['-rm', 'sh', '-c', script, 'sh', dir, probe, process.execPath], {cwd: PROJECT, reject: false})
      expect(result.stderr).toBe('')
      answers.push(result.stdout)
    }
    expect(answers).toEqual(['false', 'false', 'false'])
  })
})
