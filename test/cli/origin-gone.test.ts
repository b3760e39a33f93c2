// An origin that no longer exists (SPEC "hmm apply" › State): every command
// taking the workspace says so in one line; hmm path and rm still work, and
// hmm ls marks the origin.
import {renameSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made} from './taking.js'

let world: World
afterEach(() => world?.dispose())

describe('a workspace whose origin is gone', () => {
  it('log, diff, apply, merge and pr say where it was made from; path, ls and rm still work', async () => {
    world = new World('origin-gone')
    await world.git(['init', '-q'])
    world.file('README.md', 'hello\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    const ws = await made(world, 'echo more >> README.md && git commit -qam more && echo new > new.txt', 'gone')
    const cwd = world.home
    renameSync(world.origin, `${world.origin}.moved`)
    const line = `hmm: ${world.origin}, where workspace ${ws.label} was made from, no longer exists\n`
    for (const command of [['log'], ['log', '-p'], ['diff'], ['diff', '--stat'], ['apply'], ['merge'], ['pr']]) {
      expect({command, ...(await hmm(world, [...command, ws.id], {cwd}))}).toEqual({command, exitCode: 1, stdout: '', stderr: line})
    }
    expect(await hmm(world, ['path', ws.id], {cwd})).toEqual({exitCode: 0, stdout: `${ws.tree}\n`, stderr: ''})
    const listed = await hmm(world, ['ls', '-a'], {cwd})
    expect(listed.stdout).toMatch(/ ~\/src\/proj \(gone\)\n$/)
    expect((await hmm(world, ['rm', '-f', ws.id], {cwd})).exitCode).toBe(0)
    expect((await hmm(world, ['ls', '-a'], {cwd})).stdout).toBe('')
  })
})
