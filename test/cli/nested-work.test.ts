// Work inside nested repositories (a plain origin holding repositories, an
// untracked repository inside a git origin, a submodule): hmm takes back
// only what `hmm diff` shows, the gitlink of a nested repository at most,
// never what its commits or files hold. So that work is never lost by
// accident: rm, prune and WORK count it as work not taken back, and diff,
// apply and merge say which nested repositories have it. Git never runs
// outside the sandbox in them, and not inside it under their config either.
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {shellQuote, World} from '../world.js'
import {hmm, made, said, type Made} from './taking.js'

let world: World
afterEach(() => world?.dispose())

/** A repository with one commit at dir (relative to the origin). */
async function repo(dir: string, content = `${dir} v1\n`): Promise<void> {
  const path = join(world.origin, dir)
  world.file(join(dir, 'main.txt'), content)
  await world.git(['init', '-q'], path)
  await world.git(['add', '-A'], path)
  await world.git(['commit', '-qm', 'init'], path)
}

function nestedLine(ws: Made, path: string): string {
  return `hmm: workspace ${ws.label}'s nested repository ${path} has changes that hmm does not take back: look at them with hmm exec ${ws.id} git -C ${shellQuote(join(ws.tree, path))} status, and copy what you want from there`
}

function diffLine(ws: Made, paths: string[]): string {
  const which = paths.length === 1 ? `repository ${paths[0]} has` : `repositories ${paths.join(', ')} have`
  return `hmm: workspace ${ws.label}'s nested ${which} changes that hmm diff does not show`
}

const REFUSED = (ws: Made) => `hmm: workspace ${ws.label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)\n`

async function work(ws: Made): Promise<{files: number | null; commits: number | null; taken: string | null}> {
  const listed = JSON.parse((await hmm(world, ['ls', '-a', '--json'])).stdout) as Array<{
    id: string
    files: number | null
    commits: number | null
    taken: string | null
  }>
  const row = listed.find(entry => entry.id === ws.id)!
  return {files: row.files, commits: row.commits, taken: row.taken}
}

/** rm without -f refuses and prune leaves it; the tree is still there. */
async function kept(ws: Made): Promise<void> {
  expect(await hmm(world, ['prune', '-a'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
  expect(await hmm(world, ['rm', ws.id])).toEqual({exitCode: 1, stdout: '', stderr: REFUSED(ws)})
  expect(existsSync(ws.tree)).toBe(true)
}

/**
 * Every name beneath dir. A directory its owner cannot read is passed over: the
 * kernel makes an overlay's work directory (caches/<n>/work/work) mode 000, and
 * nothing the command or git runs can reach it.
 */
function namesUnder(dir: string): string[] {
  let entries
  try {
    entries = readdirSync(dir, {withFileTypes: true})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES') return []
    throw error
  }
  return entries.flatMap(entry => [entry.name, ...(entry.isDirectory() ? namesUnder(join(dir, entry.name)) : [])])
}

describe('work in nested repositories', () => {
  it('a plain origin holding repositories: diff and apply name them, apply does not count them taken, rm and prune keep them', async () => {
    world = new World('nested-work-plain')
    await repo('api')
    await repo('web')
    world.file('README', 'readme\n')
    const ws = await made(world, 'echo fix >> api/main.txt; echo fix >> web/main.txt; (cd web && git commit -qam web-fix); echo top >> README', 'multi')
    expect(await work(ws)).toMatchObject({taken: null})
    expect((await work(ws)).files).toBeGreaterThan(0)

    const diff = await hmm(world, ['diff', 'multi'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('+top\n')
    expect(said(diff.stderr)).toEqual([diffLine(ws, ['api', 'web'])])

    const applied = await hmm(world, ['apply', 'multi'])
    expect(applied.exitCode).toBe(0)
    expect(said(applied.stderr)).toEqual([nestedLine(ws, 'api'), nestedLine(ws, 'web'), `hmm: applied workspace ${ws.label} to ${world.origin}`])
    expect(await world.sh('cat README api/main.txt web/main.txt')).toBe('readme\ntop\napi v1\nweb v1')
    expect(await work(ws)).toEqual({commits: 0, files: 2, taken: null})
    await kept(ws)
    expect((await hmm(world, ['rm', '-f', ws.id])).exitCode).toBe(0)
  })

  it.each([
    ['a plain origin', false],
    ['a git origin (an untracked repository and a submodule)', true],
  ])(
    '%s: nested repositories left as they were, or changed only in what they ignore, are no work',
    async (_, inGit) => {
      world = new World('nested-work-clean')
      if (inGit) await world.gitRepo()
      await repo('api')
      world.file('api/.gitignore', 'build/\n')
      await world.git(['add', '.gitignore'], join(world.origin, 'api'))
      await world.git(['commit', '-qm', 'ignore'], join(world.origin, 'api'))
      if (inGit) {
        await repo('lib')
        await world.git(['add', 'lib'])
        await world.git(['commit', '-qm', 'lib as a gitlink'])
      }
      const ws = await made(world, 'mkdir -p api/build && echo out > api/build/x.o && cat api/main.txt >/dev/null')
      expect(await work(ws)).toEqual({commits: 0, files: 0, taken: null})
      const diff = await hmm(world, ['diff'])
      expect(diff).toEqual({exitCode: 0, stdout: '', stderr: ''})
      expect(await hmm(world, ['rm', ws.id])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: removed workspace ${ws.label}\n`})
    },
    120_000,
  )

  it('an untracked repository inside a git origin: its commit and its uncommitted edits are work, never claimed taken', async () => {
    world = new World('nested-work-untracked')
    await world.gitRepo()
    await repo('vendor/lib')
    const committed = await made(world, 'cd vendor/lib && echo fix >> main.txt && git commit -qam fix', 'committed')
    const edited = await made(world, 'echo edit >> vendor/lib/main.txt', 'edited')
    expect(await work(edited)).toEqual({commits: 0, files: 1, taken: null})

    const applied = await hmm(world, ['apply', 'committed'])
    expect(said(applied.stderr)).toEqual([nestedLine(committed, 'vendor/lib'), `hmm: applied workspace ${committed.label} to ${world.origin}`])
    expect(await world.sh('cat vendor/lib/main.txt; git -C vendor/lib log --format=%s')).toBe('vendor/lib v1\ninit')
    const nothing = await hmm(world, ['apply', 'edited'])
    expect(nothing).toEqual({exitCode: 0, stdout: '', stderr: `${nestedLine(edited, 'vendor/lib')}\n`})
    expect(await hmm(world, ['diff', 'edited'])).toEqual({exitCode: 0, stdout: '', stderr: `${diffLine(edited, ['vendor/lib'])}\n`})
    await kept(committed)
    await kept(edited)
  })

  it("a submodule: merge takes the commit moving it and says that the submodule's own commit stays behind", async () => {
    world = new World('nested-work-submodule')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'readme'])
    await repo('lib')
    await world.git(['add', 'lib'])
    await world.git(['commit', '-qm', 'lib as a gitlink'])
    const ws = await made(world, 'cd lib && echo fix >> main.txt && git commit -qam fix && cd .. && git add lib && git commit -qm "move lib"', 'sub')
    const merged = await hmm(world, ['merge', 'sub'])
    expect(merged.exitCode).toBe(0)
    expect(said(merged.stderr)).toContain(nestedLine(ws, 'lib'))
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('move lib')
    expect(await world.sh('cat lib/main.txt')).toBe('lib v1')
    await kept(ws)
  })

  it('a nested repository whose config and hooks name programs: nothing runs, inside the sandbox or out, and its edits still count', async () => {
    world = new World('nested-work-armed')
    await repo('lib')
    world.file('top.txt', 'top\n')
    // Every program the repository names leaves a marker in $HOME and in the git directory it runs with.
    const script = String.raw`
T=$PWD
printf '#!/bin/sh\ntouch "$HOME/marker-$1"; [ -n "$GIT_DIR" ] && touch "$GIT_DIR/marker-$1"\ncat\n' > evil.sh && chmod +x evil.sh
mkdir hooks && for h in pre-commit post-commit post-index-change reference-transaction fsmonitor-watchman; do printf '#!/bin/sh\ntouch "$HOME/marker-hook-%s"; [ -n "$GIT_DIR" ] && touch "$GIT_DIR/marker-hook-%s"\n' $h $h > hooks/$h; done && chmod +x hooks/*
git -C lib config core.fsmonitor "'$T/evil.sh' fsmonitor"
git -C lib config core.hooksPath "$T/hooks"
git -C lib config filter.evil.clean "'$T/evil.sh' clean"
git -C lib config core.untrackedCache true
printf '* filter=evil\n' > lib/.gitattributes
echo edit >> lib/main.txt
`
    const ws = await made(world, script)
    const found = () => [
      ...readdirSync(world.home).filter(name => name.startsWith('marker-')),
      ...namesUnder(join(world.dataDir, ws.id)).filter(name => name.includes('marker-')),
    ]
    expect(found()).toEqual([])
    expect(await work(ws)).toMatchObject({taken: null})
    expect((await work(ws)).files).toBeGreaterThan(0)
    expect(said((await hmm(world, ['diff'])).stderr)).toEqual([diffLine(ws, ['lib'])])
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    await kept(ws)
    expect(found()).toEqual([])
    // The traps are real: the repository's own git springs them.
    await world.sh('git status </dev/null >/dev/null 2>&1; true', join(ws.tree, 'lib'))
    expect(readdirSync(world.home).filter(name => name.startsWith('marker-'))).toContain('marker-fsmonitor')
  })
})
