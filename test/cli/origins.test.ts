// Where `hmm run` may be started (SPEC `hmm run`): in a subdirectory of a
// repository the workspace is a clone of the repository's top, the command
// starts in the same subdirectory, and the workspace belongs to the top.
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'
import {hmm, made, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

describe('hmm run in a subdirectory of a git repository', () => {
  it('clones the top and starts the command in the same subdirectory, where git works as at the top', async () => {
    world = new World('origin-subdir')
    await world.gitRepo()
    const sub = join(world.origin, 'src')
    const result = await world.hmm(['run', 'sh', '-c', 'pwd && git rev-parse --show-prefix && ls ..'], {cwd: sub})
    expect(result.exitCode, result.stderr).toBe(0)
    const {id, tree} = workspaceLine(result.stderr)
    expect(tree).toBe(join(world.dataDir, id, 'tree', 'proj'))
    expect(result.stdout).toBe(`${tree}/src\nsrc/\nREADME.md\nbuild\nnotes.txt\nsrc\n`)
    // Everything of the top was cloned, ignored build output too.
    expect(readFileSync(join(tree, 'build', 'out.o'), 'utf8')).toBe('ignored build output\n')
  })

  it("belongs to the top: hmm in the subdirectory lists the top's workspaces, and finds them by name", async () => {
    world = new World('origin-subdir-ls')
    await world.gitRepo()
    const sub = join(world.origin, 'src')
    const fromTop = await made(world, 'true', 'at-top')
    const fromSub = await made(world, 'true', 'in-sub', sub)
    for (const cwd of [world.origin, sub]) {
      const listed = JSON.parse((await hmm(world, ['ls', '--json'], {cwd})).stdout) as Array<{id: string; origin: string}>
      expect(listed.map(ws => [ws.id, ws.origin])).toEqual([
        [fromTop.id, world.origin],
        [fromSub.id, world.origin],
      ])
      expect((await hmm(world, ['path', 'at-top'], {cwd})).stdout).toBe(`${fromTop.tree}\n`)
    }
  })

  it('takes the work back from the subdirectory: diff, apply and merge act on the whole repository', async () => {
    world = new World('origin-subdir-take')
    await world.gitRepo()
    const sub = join(world.origin, 'src')
    const committed = await made(world, 'echo lib > lib.c && echo top > ../top.txt && git add lib.c ../top.txt && git commit -qm work', 'committed', sub)
    const changed = await made(world, 'echo here > here.c && echo up > ../up.txt', 'changed', sub)

    const diff = await hmm(world, ['diff', '--stat', 'changed'], {cwd: sub})
    expect(diff.exitCode, diff.stderr).toBe(0)
    expect(diff.stdout).toMatch(/ src\/here\.c \| 1 \+\n up\.txt {2,}\| 1 \+\n/)
    expect(await hmm(world, ['apply', 'changed'], {cwd: sub})).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: applied workspace ${changed.label} to ${world.origin}\n`,
    })
    expect(readFileSync(join(sub, 'here.c'), 'utf8')).toBe('here\n')
    expect(readFileSync(join(world.origin, 'up.txt'), 'utf8')).toBe('up\n')
    expect(existsSync(join(sub, 'src'))).toBe(false)

    const merged = await taking(world, ['merge', 'committed'], {cwd: sub})
    expect(merged).toEqual({exitCode: 0, stdout: '', stderr: `hmm: merged workspace ${committed.label} into main of ${world.origin} (fast-forward)\n`})
    expect(await world.git(['log', '--format=%s'])).toBe('work\nfirst')
    expect(readFileSync(join(sub, 'lib.c'), 'utf8')).toBe('lib\n')
    expect(readFileSync(join(world.origin, 'top.txt'), 'utf8')).toBe('top\n')
  })

  it('starts hmm exec in the same subdirectory of the workspace, or at its top when the command removed it', async () => {
    world = new World('origin-subdir-exec')
    await world.gitRepo()
    const sub = join(world.origin, 'src')
    const ws = await made(world, 'true', 'ex')
    const inSub = await world.hmm(['exec', 'ex', 'pwd'], {cwd: sub})
    expect(inSub.stdout).toBe(`${ws.tree}/src\n`)
    const atTop = await world.hmm(['exec', 'ex', 'pwd'], {cwd: world.origin})
    expect(atTop.stdout).toBe(`${ws.tree}\n`)
    await world.hmm(['exec', 'ex', 'rm', '-r', 'src'], {cwd: world.origin})
    const removed = await world.hmm(['exec', 'ex', 'pwd'], {cwd: sub})
    expect(removed).toMatchObject({exitCode: 0, stdout: `${ws.tree}\n`})
  })
})

describe('hmm run in a subdirectory of a plain directory', () => {
  it('clones that directory, as before: only a repository has a top', async () => {
    world = new World('origin-plain-subdir')
    world.file('a.txt', 'a\n')
    const sub = join(world.origin, 'sub')
    mkdirSync(sub)
    world.file('sub/b.txt', 'b\n')
    const result = await world.hmm(['run', 'sh', '-c', 'pwd && ls'], {cwd: sub})
    const {id, tree} = workspaceLine(result.stderr)
    expect(tree).toBe(join(world.dataDir, id, 'tree', 'sub'))
    expect(result.stdout).toBe(`${tree}\nb.txt\n`)
  })
})

describe('hmm run in a linked worktree (git worktree add)', () => {
  /** The world's repository with a linked worktree beside it on branch feature; returns its path. */
  async function worktree(): Promise<string> {
    await world.gitRepo()
    const wt = join(world.origin, '..', 'wt')
    await world.git(['worktree', 'add', '-q', '-b', 'feature', wt])
    world.write(join(wt, 'wt-untracked.txt'), 'untracked in the worktree\n')
    return wt
  }

  it('gives the workspace a repository of its own, in which the command can commit', async () => {
    world = new World('origin-worktree-commit')
    const wt = await worktree()
    const result = await world.hmm(
      [
        'run',
        'sh',
        '-c',
        'git status --porcelain && echo f > f.txt && git add f.txt && git commit -qm feature-work && git log --format=%s && git branch --show-current',
      ],
      {cwd: wt},
    )
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('?? wt-untracked.txt\nfeature-work\nfirst\nfeature\n')
    const {tree} = workspaceLine(result.stderr)
    expect(tree.endsWith('/tree/wt')).toBe(true)
    // The origin's repository got nothing: its branches are as they were.
    expect(await world.git(['log', '--format=%s', 'feature'])).toBe('first')
    expect(await world.git(['log', '--format=%s', 'main'])).toBe('first')
  })

  it('takes the work back into the worktree and its branch: diff, apply and merge', async () => {
    world = new World('origin-worktree-take')
    const wt = await worktree()
    const committed = await made(world, 'echo f > f.txt && git add f.txt && git commit -qm feature-work', 'committed', wt)
    const changed = await made(world, 'echo x > x.txt', 'changed', wt)

    const diff = await hmm(world, ['diff', '--stat', 'changed'], {cwd: wt})
    expect(diff).toMatchObject({exitCode: 0, stdout: expect.stringMatching(/^ x\.txt \| 1 \+\n 1 file changed/)})
    expect(await hmm(world, ['apply', 'changed'], {cwd: wt})).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${changed.label} to ${wt}\n`})
    expect(readFileSync(join(wt, 'x.txt'), 'utf8')).toBe('x\n')

    expect(await taking(world, ['merge', 'committed'], {cwd: wt})).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: merged workspace ${committed.label} into feature of ${wt} (fast-forward)\n`,
    })
    expect(await world.git(['log', '--format=%s'], wt)).toBe('feature-work\nfirst')
    expect(readFileSync(join(wt, 'f.txt'), 'utf8')).toBe('f\n')
    // The main worktree and its branch are untouched.
    expect(await world.git(['log', '--format=%s', 'main'])).toBe('first')
    expect(existsSync(join(world.origin, 'f.txt'))).toBe(false)
    expect((await hmm(world, ['rm', 'committed', 'changed'], {cwd: wt})).exitCode).toBe(0)
  })
})

describe.skipIf(process.getuid?.() !== 0)("hmm run as root in another user's repository (root only)", () => {
  it('says git refuses it, one line, nothing made, where git does not trust it (safe.directory): it is not a plain directory', async () => {
    world = new World('origin-not-trusted')
    await world.gitRepo()
    await world.sh('chown -R 65534:65534 .')
    const result = await hmm(world, ['run', 'true'])
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: git cannot use the repository at ${world.origin}: detected dubious ownership in repository at '${world.origin}' (git status there says more)\n`,
    })
    expect((await hmm(world, ['ls', '--json'])).stdout).toBe('[]\n')
  })

  it('lets the command commit in the workspace once the user trusts the repository, and merges what it committed', async () => {
    world = new World('origin-trusted')
    await world.gitRepo()
    await world.sh('chown -R 65534:65534 .')
    await world.git(['config', '--global', '--add', 'safe.directory', world.origin])
    const result = await hmm(world, ['run', 'sh', '-c', 'echo x > x.txt && git add x.txt && git commit -qm x'])
    expect(result.exitCode, result.stderr).toBe(0)
    const merged = await taking(world, ['merge'])
    expect(merged.stderr).toMatch(/^hmm: merged workspace \w+ into main of .* \(fast-forward\)\n/)
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('x')
  })
})
