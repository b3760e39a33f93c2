// The workspace's first index: the clone's own stat data where the origin
// provably did not change, so the first diff reads only what changed.
import {execa} from 'execa'
import {existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {cloneTree} from '../../src/platform/clone.js'
import {parseIndex} from '../../src/git/index-file.js'
import {checkFirstIndex, markForCheck, planFirstIndex, writeFirstIndex, type FirstIndexPlan} from '../../src/git/first-index.js'
import {askGitOrigin, recordGitOrigin} from '../../src/git/origin.js'
import {statPairs, type StatPairs} from '../../src/native/helper.js'
import {readFileSync} from 'node:fs'
import {PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

interface Forked {
  origin: string
  tree: string
  gitDir: string
  plan: FirstIndexPlan
  /** The stat pairs of the plan's paths, as the clone answered them (helper) or asked afterwards (cp). */
  stats: () => StatPairs
}

/** The two ways hmm clones: the helper answering the stat pairs as it copies, and cp followed by stat-pairs. */
const CLONES = ['helper', 'cp'] as const

async function forkAndClone(how: (typeof CLONES)[number], beforeClone = (_origin: string) => {}): Promise<Forked> {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', 'wsindex-'))
  dirs.push(dir)
  const origin = join(dir, 'origin')
  mkdirSync(join(origin, 'src'), {recursive: true})
  for (const name of ['a.txt', 'src/b.c', 'c d.txt']) writeFileSync(join(origin, name), `${name}\n`)
  const env = {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e'}
  await execa('git', ['init', '-q'], {cwd: origin, env})
  await execa('git', ['add', '-A'], {cwd: origin, env})
  await execa('git', ['commit', '-qm', 'x'], {cwd: origin, env})
  writeFileSync(join(origin, 'a.txt'), 'changed, uncommitted\n')
  const gitDir = join(dir, 'git')
  await recordGitOrigin(origin, (await askGitOrigin(origin))!, gitDir)
  const plan = planFirstIndex(gitDir, 'sha1')!
  beforeClone(origin)
  const tree = join(dir, 'tree')
  if (how === 'helper') {
    const answered = (await cloneTree(origin, tree, {statPaths: plan.paths}))!
    return {origin, tree, gitDir, plan, stats: () => answered}
  }
  await execa('cp', ['-a', origin, tree])
  return {origin, tree, gitDir, plan, stats: () => statPairs(origin, tree, plan.paths)}
}

function entries(gitDir: string) {
  return parseIndex(readFileSync(join(gitDir, 'index')), 'sha1')!.entries
}

describe.each(CLONES)("the workspace's first index (clone by %s)", how => {
  it("takes the clone's stat data for files the origin did not change since git hashed them", async () => {
    const {tree, gitDir, plan, stats} = await forkAndClone(how)
    writeFirstIndex(plan, stats(), Date.now(), () => Date.now() + 10_000)
    for (const entry of entries(gitDir)) {
      expect(entry.stat.ino, entry.path).toBe(statSync(join(tree, entry.path)).ino)
      expect(entry.stat.size, entry.path).toBe(statSync(join(tree, entry.path)).size)
    }
  })

  it("keeps the origin's stat data (so git reads the file) where the origin changed after the fork", async () => {
    // Changed after git hashed it, before it was cloned (by the user, in life).
    const {tree, gitDir, plan, stats} = await forkAndClone(how, origin => writeFileSync(join(origin, 'src/b.c'), 'changed after the fork\n'))
    writeFirstIndex(plan, stats(), Date.now(), () => Date.now() + 10_000)
    const byPath = new Map(entries(gitDir).map(entry => [entry.path, entry]))
    expect(byPath.get('src/b.c')!.stat.ino).not.toBe(statSync(join(tree, 'src/b.c')).ino)
    expect(byPath.get('a.txt')!.stat.ino).toBe(statSync(join(tree, 'a.txt')).ino)
    expect(existsSync(join(gitDir, 'index.check-from'))).toBe(false)
  })

  it('has entries cloned in the second the command may start in checked to the nanosecond before git uses them', async () => {
    // The clone and the rewrite below must share one second (that is the case under test); under load they
    // may not, so the scenario is made again, from the start of a second, until they do.
    let made: Awaited<ReturnType<typeof forkAndClone>> | undefined
    for (let attempt = 0; attempt < 5 && !made; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
      const scenario = await forkAndClone(how)
      const cloned = Math.floor(statSync(join(scenario.tree, 'c d.txt')).ctimeMs / 1000)
      const treeMade = Date.now()
      writeFirstIndex(scenario.plan, scenario.stats(), treeMade, () => cloned * 1000)
      expect(readFileSync(join(scenario.gitDir, 'index.check-from'), 'utf8')).toBe(`${cloned} ${treeMade}\n`)
      // Rewritten at the same size, its mtime put back: only its ctime (nanoseconds, maybe) tells.
      const file = join(scenario.tree, 'c d.txt')
      const before = statSync(file)
      writeFileSync(file, 'C D.TXT\n')
      // In seconds, not as Dates: a Date rounds to the millisecond, which can carry the mtime into the next second.
      utimesSync(file, before.atimeMs / 1000, before.mtimeMs / 1000)
      if (Math.floor(statSync(file).ctimeMs / 1000) === cloned) made = scenario // as git sees it: unchanged
    }
    if (!made) throw new Error('the clone and the rewrite never fell in one second in 5 tries')
    const {tree, gitDir} = made
    await checkFirstIndex(join(gitDir, 'index'), tree)
    const byPath = new Map(entries(gitDir).map(entry => [entry.path, entry]))
    expect(byPath.get('c d.txt')!.stat.ctimeSec).toBe(0)
    expect(byPath.get('a.txt')!.stat.ino).toBe(statSync(join(tree, 'a.txt')).ino)
    expect(byPath.get('a.txt')!.stat.ctimeSec).not.toBe(0)
    // The mark stays while its second lasts (a change may still come in it), and goes after.
    const now = Math.floor(Date.now() / 1000)
    markForCheck(join(gitDir, 'index'), now + 100)
    await checkFirstIndex(join(gitDir, 'index'), tree)
    expect(existsSync(join(gitDir, 'index.check-from'))).toBe(true)
    markForCheck(join(gitDir, 'index'), now - 1)
    await checkFirstIndex(join(gitDir, 'index'), tree)
    expect(existsSync(join(gitDir, 'index.check-from'))).toBe(false)
  })
})
