// hmm diff WS -- PATH... and hmm apply WS -- PATH... (SPEC "hmm apply" ›
// Paths): only what lies under those paths, as git's pathspecs relative to
// the working directory; the rest stays in the workspace, which counts as
// applied only once all of it was taken.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made, said} from './taking.js'

let world: World
afterEach(() => world?.dispose())

/** A repository, and a workspace that changed src/, docs/ and made a virtualenv. */
async function worked(name: string) {
  world = new World(name)
  await world.git(['init', '-q'])
  world.file('src/a.py', 'a = 1\n')
  world.file('src/b.py', 'b = 1\n')
  world.file('docs/guide.md', '# Guide\n')
  await world.git(['add', '-A'])
  await world.git(['commit', '-qm', 'first'])
  return made(
    world,
    'echo "a = 2" > src/a.py && echo "c = 1" > src/c.py && echo more >> docs/guide.md && mkdir -p .venv/bin && echo activate > .venv/bin/activate',
  )
}

const changedFiles = (patch: string) => [...patch.matchAll(/^diff --git a\/(\S+) /gm)].map(match => match[1])

describe('hmm diff and hmm apply -- PATH...', () => {
  it('hmm diff shows only what lies under the paths, relative to the working directory', async () => {
    const ws = await worked('paths-diff')
    expect(changedFiles((await hmm(world, ['diff', ws.id])).stdout)).toEqual(['.venv/bin/activate', 'docs/guide.md', 'src/a.py', 'src/c.py'])
    expect(changedFiles((await hmm(world, ['diff', ws.id, '--', 'src'])).stdout)).toEqual(['src/a.py', 'src/c.py'])
    expect(changedFiles((await hmm(world, ['diff', ws.id, '--', 'docs', 'src/c.py'])).stdout)).toEqual(['docs/guide.md', 'src/c.py'])
    expect(changedFiles((await hmm(world, ['diff', ws.id, '--', 'a.py'], {cwd: join(world.origin, 'src')})).stdout)).toEqual(['src/a.py'])
    expect(changedFiles((await hmm(world, ['diff', ws.id, '--', '*.md'])).stdout)).toEqual(['docs/guide.md'])
    const stat = await hmm(world, ['diff', '--stat', ws.id, '--', 'docs'])
    expect(stat.stdout).toContain('docs/guide.md')
    expect(stat.stdout).not.toContain('src/')
    expect(await hmm(world, ['diff', ws.id, '--', 'nothing-here'])).toMatchObject({exitCode: 0, stdout: ''})
  })

  it('refuses a path outside the origin', async () => {
    const ws = await worked('paths-outside')
    expect(await hmm(world, ['diff', ws.id, '--', '../elsewhere'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: ../elsewhere is outside ${world.origin}, where workspace ${ws.label} was made from\n`,
    })
  })

  it('hmm apply takes only those paths, and the workspace counts as applied once everything was taken', async () => {
    const ws = await worked('paths-apply')
    const first = await hmm(world, ['apply', ws.id, '--', 'src'])
    expect(first).toMatchObject({exitCode: 0})
    expect(said(first.stderr)).toEqual([`hmm: applied workspace ${ws.label} to ${world.origin} (src; the rest stays in the workspace)`])
    expect(readFileSync(join(world.origin, 'src/a.py'), 'utf8')).toBe('a = 2\n')
    expect(readFileSync(join(world.origin, 'src/c.py'), 'utf8')).toBe('c = 1\n')
    expect(readFileSync(join(world.origin, 'docs/guide.md'), 'utf8')).toBe('# Guide\n')
    expect(existsSync(join(world.origin, '.venv'))).toBe(false)
    // Not all of it was taken.
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect(said((await hmm(world, ['apply', ws.id, '--', 'src'])).stderr)).toEqual([`hmm: workspace ${ws.label} is already applied to ${world.origin} (src)`])
    // The rest, without what was taken already.
    const rest = await hmm(world, ['apply', ws.id, '--', 'docs'])
    expect(rest).toMatchObject({exitCode: 0})
    expect(readFileSync(join(world.origin, 'docs/guide.md'), 'utf8')).toBe('# Guide\nmore\n')
    const last = await hmm(world, ['apply', ws.id])
    expect(said(last.stderr)).toEqual([`hmm: applied workspace ${ws.label} to ${world.origin}`])
    expect(readFileSync(join(world.origin, '.venv/bin/activate'), 'utf8')).toBe('activate\n')
    expect(said((await hmm(world, ['apply', ws.id])).stderr)).toEqual([`hmm: workspace ${ws.label} is already applied to ${world.origin}`])
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(0)
  })

  it('hmm apply of all the paths at once counts as applied', async () => {
    const ws = await worked('paths-apply-all')
    expect((await hmm(world, ['apply', ws.id, '--', 'src', 'docs', '.venv'])).exitCode).toBe(0)
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(0)
  })
})
