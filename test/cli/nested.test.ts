// Nested repositories (issue 11, item 1): a repository inside the workspace
// (at any depth, a submodule, one behind a `.git` file, one whose
// core.worktree points elsewhere) is the command's as much as the
// workspace's own. Git outside the sandbox records it as a gitlink and
// never enters it, so nothing its config, hooks or attributes name runs.
import {execa} from 'execa'
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const HOOKS = ['pre-commit', 'post-commit', 'post-checkout', 'post-merge', 'pre-push', 'reference-transaction', 'post-index-change', 'fsmonitor-watchman']

/**
 * The command's script. `arm R W` arms repository R (work tree W): every
 * program its config or attributes can make git run leaves
 * $HOME/marker-<what>-<repo>, which the sandboxed command itself cannot
 * write. Then each repository is left with a tracked file changed (so a git
 * status there would hash it), and the workspace with a commit.
 */
const SCRIPT = String.raw`
set -e
T=$PWD
mkdir -p store .git/modules
printf '#!/bin/sh\ntouch "$HOME/marker-$1"\ncat\n' > evil.sh && chmod +x evil.sh
mkdir hooks && for h in ${HOOKS.join(' ')}; do printf '#!/bin/sh\ntouch "$HOME/marker-hook-%s"\n' "$h" > hooks/$h; done && chmod +x hooks/*
repo() { d=$1 && shift && mkdir -p "$d" && git -C "$d" -c init.defaultBranch=main init -q "$@" && echo one > "$d/f.txt" && git -C "$d" add f.txt && git -C "$d" commit -qm one; }
arm() {
  git -C "$1" config core.fsmonitor "'$T/evil.sh' fsmonitor-$2"
  git -C "$1" config core.hooksPath "$T/hooks"
  git -C "$1" config filter.evil.clean "'$T/evil.sh' clean-$2"
  git -C "$1" config filter.evil.smudge "'$T/evil.sh' smudge-$2"
  git -C "$1" config filter.evil.process "'$T/evil.sh' process-$2"
  git -C "$1" config diff.evil.textconv "'$T/evil.sh' textconv-$2"
  git -C "$1" config core.pager "'$T/evil.sh' pager-$2"
  git -C "$1" config core.untrackedCache true
  printf '* filter=evil diff=evil\n' > "$1/.gitattributes"
  echo two >> "$1/f.txt" && echo new > "$1/new.txt"
}
repo nested && arm nested nested
repo a/b/deep && arm a/b/deep deep
repo gitfile --separate-git-dir="$T/store/real.git" && arm gitfile gitfile
repo wt && mkdir elsewhere && echo one > elsewhere/f.txt && git -C wt config core.worktree "$T/elsewhere" && arm wt worktree && printf '* filter=evil\n' > elsewhere/.gitattributes && echo two >> elsewhere/f.txt
repo sub --separate-git-dir="$T/.git/modules/sub"
printf '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n' > .gitmodules
echo top > top.txt && git add top.txt .gitmodules sub && git commit -qm 'top and a submodule'
arm sub sub
echo change >> README.md
`

function markers(): string[] {
  return readdirSync(world.home).filter(name => name.startsWith('marker-'))
}

describe('nested repositories', () => {
  it('are recorded, never entered: nothing their config, hooks or attributes name runs outside', async () => {
    world = new World('nested')
    await world.gitRepo()
    const bare = join(world.root, 'remote.git')
    await world.git(['init', '-q', '--bare', bare])
    await world.git(['remote', 'add', 'origin', bare])
    await world.git(['push', '-q', '-u', 'origin', 'main'])
    const ws = await made(world, SCRIPT, 'nest')
    expect(markers()).toEqual([])

    const diff = await hmm(world, ['diff'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('+change\n')
    expect(diff.stdout.match(/^\+Subproject commit /gm)).toHaveLength(5)
    for (let round = 0; round < 2; round++) {
      const stat = await hmm(world, ['diff', '--stat'])
      expect(stat.exitCode).toBe(0)
      for (const path of ['nested', 'a/b/deep', 'gitfile', 'wt', 'sub', 'README.md']) expect(stat.stdout).toContain(` ${path} `)
    }
    expect(markers()).toEqual([])
    // The git directory the command made in the tree (store/real.git, gitfile's) is one git would take for a repository:
    // refused unless forced.
    const refused = await hmm(world, ['apply', '--check'])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('hmm:   store/real.git: a directory git takes for a repository')
    expect((await hmm(world, ['apply', '--force'])).exitCode).toBe(0)
    await world.git(['reset', '-q', '--hard'])
    await world.git(['clean', '-qffd'])
    expect(await hmm(world, ['merge'])).toMatchObject({exitCode: 0})
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('top and a submodule')
    expect(await hmm(world, ['pr'])).toMatchObject({exitCode: 0, stderr: expect.stringContaining('(not on GitHub)')})
    expect(await world.git(['log', '-1', '--format=%s', 'hmm/nest'], bare)).toBe('top and a submodule')
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect(markers()).toEqual([])

    // The traps are real: git run outside the sandbox in those repositories springs them.
    for (const dir of ['nested', 'a/b/deep', 'gitfile', 'wt', 'sub']) {
      await execa('git', ['status'], {cwd: join(ws.tree, dir), env: world.env, extendEnv: false, reject: false, stdin: 'ignore'})
    }
    expect(markers()).toEqual(
      expect.arrayContaining([
        'marker-fsmonitor-nested',
        'marker-fsmonitor-deep',
        'marker-fsmonitor-gitfile',
        'marker-fsmonitor-worktree',
        'marker-fsmonitor-sub',
      ]),
    )
  })

  it('keeps a submodule that is not checked out (an empty directory) as the origin recorded it', async () => {
    world = new World('nested-unpopulated')
    await world.gitRepo()
    const head = await world.git(['rev-parse', 'HEAD'])
    await world.git(['update-index', '--add', '--cacheinfo', `160000,${head},lib`])
    await world.git(['commit', '-qm', 'a submodule'])
    world.file('lib/.keep', '')
    await world.sh('rm lib/.keep')
    await made(world, 'echo change >> README.md')
    const stat = await hmm(world, ['diff', '--stat'])
    expect(stat).toMatchObject({exitCode: 0, stdout: expect.stringContaining('README.md')})
    expect(stat.stdout).not.toContain('lib')
    expect((await hmm(world, ['diff', '--stat'])).stdout).toBe(stat.stdout)
  })
})

describe("the command's .gitmodules", () => {
  it('hides no submodule change from diff or log -p (ignore = all), and breaks neither (update = !command)', async () => {
    world = new World('nested-gitmodules')
    await world.gitRepo()
    const sub = (settings: string) =>
      `git init -q sub && (cd sub && echo s > s && git add s && git commit -qm s) && printf '[submodule "sub"]\\n\\tpath = sub\\n\\turl = ./sub\\n${settings}' > .gitmodules && git add .gitmodules sub && git commit -qm sub`
    for (const settings of ['\\tignore = all\\n', '\\tupdate = !touch "$HOME/ran"\\n']) {
      const ws = await made(world, sub(settings))
      for (const args of [
        ['diff', ws.id],
        ['log', '-p', ws.id],
      ]) {
        const shown = await hmm(world, args)
        expect(shown.exitCode, shown.stderr).toBe(0)
        expect(shown.stdout, `${settings}: ${args.join(' ')}`).toMatch(/^\+Subproject commit [0-9a-f]{40}$/m)
      }
    }
    expect(existsSync(join(world.home, 'ran'))).toBe(false)
  })
})

describe('a nested repository of another object format than the one recording it', () => {
  // Git cannot record a SHA-256 repository as a gitlink of a SHA-1 index or the other way round (git add -A fails
  // there too): hmm leaves such a repository out, as it leaves out what git ignores, and works on the rest.
  it.each([
    ['a SHA-256 repository in a plain directory', [], ['--object-format=sha256']],
    ['a SHA-1 repository in a SHA-256 repository', ['--object-format=sha256'], []],
  ])('%s: run, diff and apply work on the rest', async (_, outer, inner) => {
    world = new World('nested-format')
    world.file('a.txt', 'a\n')
    if (outer.length > 0) {
      await world.git(['init', '-q', ...outer])
      await world.git(['add', 'a.txt'])
      await world.git(['commit', '-qm', 'a'])
    }
    const nested = join(world.origin, 'nested')
    world.file('nested/inner.txt', 'inner\n')
    await world.git(['init', '-q', ...inner], nested)
    await world.git(['add', 'inner.txt'], nested)
    await world.git(['commit', '-qm', 'inner'], nested)
    const ws = await made(world, 'echo b > b.txt && echo changed > nested/inner.txt && echo more >> a.txt')
    const diff = await hmm(world, ['diff', '--stat'])
    expect(diff).toEqual({exitCode: 0, stdout: ' a.txt | 1 +\n b.txt | 1 +\n 2 files changed, 2 insertions(+)\n', stderr: ''})
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(await world.sh('cat a.txt b.txt nested/inner.txt')).toBe('a\nmore\nb\ninner')
  })
})

describe('a nested repository with no commit yet (a fresh git init)', () => {
  // git add -A fails on one ("does not have a commit checked out"), for the user's own git too: hmm leaves it out,
  // as it leaves out what git ignores, and works on the rest, whether the origin holds one or the command made it.
  it('run, diff and apply work on the rest', async () => {
    world = new World('nested-no-commit')
    await world.gitRepo()
    world.file('scratch/notes.txt', 'notes\n')
    await world.git(['init', '-q'], join(world.origin, 'scratch'))
    const ws = await made(world, 'echo more >> README.md && mkdir fresh && git -C fresh init -q && echo x > fresh/f && echo y >> scratch/notes.txt')
    expect(await hmm(world, ['diff', '--stat'])).toEqual({exitCode: 0, stdout: ' README.md | 1 +\n 1 file changed, 1 insertion(+)\n', stderr: ''})
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(await world.sh('tail -1 README.md; cat scratch/notes.txt; test -e fresh || echo no fresh')).toBe('more\nnotes\nno fresh')
  })
})
