// `hmm merge`, line by line of SPEC.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const COMMIT_TWO = 'echo one > one.txt && git add one.txt && git commit -qm one && echo two > two.txt && git add two.txt && git commit -qm two'

describe('hmm merge', () => {
  it("fast-forwards the origin's branch when it has not moved, leaving the origin's own changes alone", async () => {
    world = new World('merge-ff')
    await world.gitRepo()
    const status = await world.git(['status', '--porcelain'])
    const ws = await made(world, COMMIT_TWO, 'ff')
    const result = await taking(world, ['merge'])
    expect(result).toEqual({exitCode: 0, stdout: '', stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\n`})
    expect(await world.git(['log', '--format=%s'])).toBe('two\none\nfirst')
    expect(await world.git(['symbolic-ref', 'HEAD'])).toBe('refs/heads/main')
    expect(readFileSync(join(world.origin, 'two.txt'), 'utf8')).toBe('two\n')
    // The origin's uncommitted and untracked files, which the workspace also held, are as they were.
    expect(await world.git(['status', '--porcelain'])).toBe(status)
    // The commits stay as refs/hmm/<id> until the workspace is removed.
    expect(await world.git(['rev-parse', `refs/hmm/${ws.id}`])).toBe(await world.git(['rev-parse', 'HEAD']))
  })

  it('makes a merge commit "Merge workspace <label>" when the branch moved', async () => {
    world = new World('merge-commit')
    await world.gitRepo()
    const ws = await made(world, COMMIT_TWO, 'mc')
    world.file('origin.txt', 'the user committed meanwhile\n')
    await world.git(['add', 'origin.txt'])
    await world.git(['commit', '-qm', 'meanwhile'])
    const result = await taking(world, ['merge', 'mc'])
    expect(result).toEqual({exitCode: 0, stdout: '', stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin}\n`})
    expect(await world.git(['log', '-1', '--format=%s%n%P'])).toMatch(new RegExp(`^Merge workspace ${ws.id} \\(mc\\)\\n[0-9a-f]{40} [0-9a-f]{40}$`))
    expect(readFileSync(join(world.origin, 'src/main.c'), 'utf8')).toBe('int main(void) { return 0; }\n')
    expect(existsSync(join(world.origin, 'loose.txt'))).toBe(false)
    expect(readFileSync(join(world.origin, 'origin.txt'), 'utf8')).toBe('the user committed meanwhile\n')
  })

  it('leaves conflicts to resolve and exits 1', async () => {
    world = new World('merge-conflict')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'readme'])
    const ws = await made(world, 'echo workspace > src/main.c && git commit -qam ws')
    world.file('src/main.c', 'origin\n')
    await world.git(['commit', '-qam', 'origin'])
    const result = await taking(world, ['merge'])
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: merging workspace ${ws.label} into main of ${world.origin} stopped at conflicts: resolve them and commit (git status lists them)\n`,
    })
    expect(await world.git(['ls-files', '--unmerged', '--', 'src/main.c'])).not.toBe('')
    // The markers name the workspace, not the ref hmm fetched it into.
    expect(readFileSync(join(world.origin, 'src/main.c'), 'utf8')).toBe(`<<<<<<< HEAD\norigin\n=======\nworkspace\n>>>>>>> workspace ${ws.label}\n`)
  })

  it('counts a merge whose conflicts the user resolved and committed as merged: rm removes it without -f', async () => {
    world = new World('merge-resolved')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'readme'])
    const ws = await made(world, 'echo workspace > src/main.c && git commit -qam ws', 'rs')
    world.file('src/main.c', 'origin\n')
    await world.git(['commit', '-qam', 'origin'])
    expect((await taking(world, ['merge'])).exitCode).toBe(1)
    // Given up, the merge took nothing: rm still refuses.
    await world.git(['merge', '--abort'])
    expect(await hmm(world, ['rm', 'rs'])).toMatchObject({
      exitCode: 1,
      stderr: `hmm: workspace ${ws.label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)\n`,
    })
    expect((await taking(world, ['merge'])).exitCode).toBe(1)
    world.file('src/main.c', 'both\n')
    await world.git(['commit', '-qam', 'resolved'])
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('resolved')
    expect(await hmm(world, ['rm', 'rs'])).toMatchObject({exitCode: 0, stderr: `hmm: removed workspace ${ws.label}\n`})
  })

  it('names the branch it merged into, also a new one', async () => {
    world = new World('merge-branch-named')
    await world.gitRepo()
    await world.git(['checkout', '-qb', 'feature/x'])
    const ws = await made(world, COMMIT_TWO)
    expect(await taking(world, ['merge'])).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: merged workspace ${ws.label} into feature/x of ${world.origin} (fast-forward)\n`,
    })
    expect(await world.git(['log', '--format=%s', 'feature/x'])).toBe('two\none\nfirst')
  })

  it('merges only commits, and warns about changes the workspace did not commit (exit 0)', async () => {
    world = new World('merge-uncommitted')
    await world.gitRepo()
    const ws = await made(world, `${COMMIT_TWO} && echo later >> src/main.c && echo loose > loose.txt`)
    const result = await taking(world, ['merge'])
    expect(result).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\nhmm: workspace ${ws.label} has changes it did not commit, which are not merged\n`,
    })
    expect(readFileSync(join(world.origin, 'src/main.c'), 'utf8')).toBe('int main(void) { return 0; }\n')
    expect(existsSync(join(world.origin, 'loose.txt'))).toBe(false)
    // What was not merged is still work: rm keeps it without -f.
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
  })

  it('says a workspace has no commits to merge, and leaves the origin untouched', async () => {
    world = new World('merge-nothing')
    await world.gitRepo()
    const before = snapshot(world.origin)
    for (const script of ['true', 'echo edit >> README.md', 'git commit -q --allow-empty -m x && git reset -q --hard HEAD~1']) {
      const ws = await made(world, script)
      expect(await taking(world, ['merge'])).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: workspace ${ws.label} has no commits to merge: hmm apply applies its changes\n`,
      })
    }
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('refuses an origin that was not a git repository (a subdirectory of one is its top: origins.test.ts)', async () => {
    world = new World('merge-not-top')
    world.file('a.txt', 'a\n')
    const plain = await made(world, 'echo b > b.txt')
    expect(await taking(world, ['merge'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${plain.label} was not made from a git repository: hmm apply applies its changes\n`,
    })
  })

  it('refuses a running workspace', async () => {
    world = new World('merge-running')
    await world.gitRepo()
    const go = join(world.root, 'go')
    const started = world.start(['run', '-n', 'busy', 'sh', '-c', `git commit -q --allow-empty -m x; echo ready; while [ ! -e '${go}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const result = await taking(world, ['merge', 'busy'])
    writeFileSync(go, '')
    await started.result()
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: workspace ([0-9a-z]{6}) \(busy\) is running \(hmm stop \1 ends it\)\n$/)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
  })

  it('records the merge, so rm removes the workspace (and refs/hmm/<id>) without -f', async () => {
    world = new World('merge-rm')
    await world.gitRepo()
    const ws = await made(world, COMMIT_TWO)
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect((await taking(world, ['merge'])).exitCode).toBe(0)
    expect(await hmm(world, ['rm', ws.id])).toMatchObject({exitCode: 0, stderr: `hmm: removed workspace ${ws.id}\n`})
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('two')
  })

  it('merges into a repository with no commits yet', async () => {
    world = new World('merge-unborn')
    await world.git(['init', '-q'])
    world.file('a.txt', 'a\n')
    const ws = await made(world, 'echo b > b.txt && git add b.txt && git commit -qm root && echo c > c.txt && git add c.txt && git commit -qm second')
    expect(await taking(world, ['merge'])).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\n`,
    })
    expect(await world.git(['log', '--format=%s'])).toBe('second\nroot')
    expect(await world.git(['status', '--porcelain'])).toBe('?? a.txt')
  })

  it("says why git would not merge, with git's reason, and leaves the origin's files alone", async () => {
    world = new World('merge-refused')
    await world.gitRepo()
    const ws = await made(world, 'echo ws > README.md && git commit -qam readme')
    const before = snapshot(world.origin)
    // --force: the commit changes README.md, which the origin had changed too, uncommitted, and hmm diff leaves out (review.test.ts).
    const result = await taking(world, ['merge', '--force'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(
      new RegExp(`^hmm: could not merge workspace ${ws.id} into main of ${world.origin}:\nhmm: .*would be overwritten by merge.*\nhmm: README.md\n`),
    )
    const after = snapshot(world.origin)
    expect(Object.keys(after).filter(path => !path.startsWith('.git'))).toEqual(Object.keys(before).filter(path => !path.startsWith('.git')))
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nuncommitted\n')
  })

  it("says git's reason, not 'stopped at conflicts', where the origin is in the middle of a merge of its own", async () => {
    world = new World('merge-midmerge')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'readme'])
    const ws = await made(world, 'echo a > a.txt && git add a.txt && git commit -qm a', 'mid')
    // The user's own merge of a branch stops at a conflict in src/main.c, and is not done when hmm merge is run.
    await world.git(['checkout', '-qb', 'side'])
    world.file('src/main.c', 'side\n')
    await world.git(['commit', '-qam', 'side'])
    await world.git(['checkout', '-q', 'main'])
    world.file('src/main.c', 'main\n')
    await world.git(['commit', '-qam', 'main'])
    expect(await world.sh('git merge side >/dev/null; echo $?')).toBe('1')
    const files = (dir: string) => Object.fromEntries(Object.entries(snapshot(dir)).filter(([path]) => !path.startsWith('.git')))
    const before = files(world.origin)
    const result = await taking(world, ['merge', 'mid'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(
      new RegExp(
        `^hmm: could not merge workspace ${ws.id} \\(mid\\) into main of ${world.origin}:\nhmm: (You have not concluded your merge|Merging is not possible because you have unmerged files)`,
      ),
    )
    expect(result.stderr).not.toContain('stopped at conflicts')
    expect(files(world.origin)).toEqual(before)
    // The user's merge, resolved and committed, takes nothing of the workspace's.
    world.file('src/main.c', 'both\n')
    await world.git(['commit', '-qam', 'resolved'])
    expect((await hmm(world, ['rm', 'mid'])).stderr).toBe(
      `hmm: workspace ${ws.label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)\n`,
    )
  })

  it('counts, lists and takes only the commits made since the workspace was last merged', async () => {
    world = new World('merge-again')
    await world.gitRepo()
    const ws = await made(world, 'echo a > a.txt && git add a.txt && git commit -qm a', 'sub3')
    expect((await hmm(world, ['merge', 'sub3'])).exitCode).toBe(0)
    const exec = await hmm(world, ['exec', 'sub3', 'sh', '-c', 'echo b > b.txt && git add b.txt && git commit -qm b'])
    expect(exec.stderr).toContain(`hmm: workspace ${ws.label}: ${ws.tree} (1 commit)\n`)
    expect(JSON.parse((await hmm(world, ['ls', '--json'])).stdout)[0].commits).toBe(1)
    expect((await hmm(world, ['log', 'sub3'])).stdout).toMatch(/^[0-9a-f]{7,} b\n$/)
    const merged = await hmm(world, ['merge', 'sub3'])
    expect(merged.stderr).toMatch(/^hmm: taking [0-9a-f]{7,} b\nhmm: merged workspace /)
    expect(await world.git(['log', '--format=%s'])).toBe('b\na\nfirst')
  })

  it('keeps the commits made on another branch of the workspace out: it merges what HEAD points at', async () => {
    world = new World('merge-branch')
    await world.gitRepo()
    const ws = await made(
      world,
      'git checkout -qb side && echo s > s.txt && git add s.txt && git commit -qm side && git checkout -q main && git checkout -qb topic && echo t > t.txt && git add t.txt && git commit -qm topic',
    )
    expect((await taking(world, ['merge', ws.id])).exitCode).toBe(0)
    expect(await world.git(['log', '--format=%s'])).toBe('topic\nfirst')
  })
})
