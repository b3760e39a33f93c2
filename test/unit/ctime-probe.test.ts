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
  // A no is safe (hmm then waits a tick), and a loaded machine gets one now and then (CI's, once): a yes in five tries.
  it.runIf(MULTIGRAIN)('says yes where the kernel stamps looked-at ctimes finely, and leaves nothing behind', () => {
    const dir = scratchDir('ctime-probe')
    const answers = Array.from({length: 5}, () => ctimesLaterFromNow(dir, Date.now()))
    expect(answers).toContain(true)
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

  /**
   * `rounds` times on a fresh ramfs (coarse ctimes only; a user namespace of its own may mount one): a file made as
   * the tree's, then the probe, its changes `pauseMs` apart; where it says yes, that file changed at once. What each
   * round shows: "no", or whether the change's ctime was "later" than the file's and than the instant probed for.
   */
  async function onRamfs(rounds: number, pauseMs: number): Promise<string[]> {
    const dir = scratchDir('ctime-probe')
    // The built module (npm install builds it): the probe runs in a process of the namespace.
    const module = join(PROJECT, 'dist', 'git', 'first-index.js')
    const round = `(i) => {
      const tree = join(dir, 'tree' + i)
      writeFileSync(tree, 'x')
      const made = Date.now(), before = statSync(tree, {bigint: true}).ctimeNs
      const pause = () => { const until = performance.now() + ${pauseMs}; while (performance.now() < until); }
      if (!m.ctimesLaterFromNow(dir, made, pause)) return 'no'
      appendFileSync(tree, 'y')
      const after = statSync(tree, {bigint: true}).ctimeNs
      return after > before && after > BigInt(made) * 1000000n ? 'later' : 'not later'
    }`
    const probe = `const {writeFileSync, appendFileSync, statSync} = await import('node:fs'), {join} = await import('node:path')
      const m = await import(${JSON.stringify(module)}), dir = process.argv[1]
      console.log(JSON.stringify(Array.from({length: ${rounds}}, (_, i) => (${round})(i))))`
    const script = `mount -t ramfs none "$1" && "$3" --input-type=module -e "$2" "$1"`
    const result = await execa('unshare', ['-rm', 'sh', '-c', script, 'sh', dir, probe, process.execPath], {cwd: PROJECT, reject: false})
    expect(result.stderr).toBe('')
    return JSON.parse(result.stdout) as string[]
  }

  // The kernel's stamps never go back, so rising ones on any clock mean every later one is later still.
  it.runIf(process.platform === 'linux')('says yes on a ramfs only when a change made at once gets a later ctime than all before', async () => {
    expect((await onRamfs(30, 0)).filter(answer => answer !== 'no' && answer !== 'later')).toEqual([])
  })

  // A coarse tick is 10 ms at HZ 100: changes 15 ms apart get rising ctimes there too.
  it.runIf(process.platform === 'linux')('says yes there when its changes were made a tick apart, as a process preempted between them', async () => {
    expect(await onRamfs(3, 15)).toEqual(['later', 'later', 'later'])
  })
})
