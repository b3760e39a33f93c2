// What the everyday commands cost, counted rather than timed: the programs
// hmm starts for them, as HMM_DEBUG names each one (a git by its
// subcommand, a confined start by its helper's argv). Each count is a
// piece of work done again for nothing when it grows (issue 9's first diff
// read the tree twice): `npm run bench` says what that costs in time.
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** How many of the lines HMM_DEBUG wrote to stderr start with `what`. */
function count(stderr: string, what: string): number {
  return stderr.split('\n').filter(line => line.startsWith(`hmm: debug: ${what}`)).length
}

describe('hmm run in a repository', () => {
  it('writes the tree of what the workspace holds once when the command exits, reading its files in one sandbox', async () => {
    world = new World('cost-run')
    await world.gitRepo()
    const result = await world.hmm(['run', 'sh', '-c', 'echo more >> README.md'], {env: {...world.env, HMM_DEBUG: '1'}})
    expect(result.exitCode).toBe(0)
    const [, ended] = result.stderr.split(/^hmm: workspace .*\n/m)
    expect(result.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(1 file\)$/m)
    expect({trees: count(ended, 'git write-tree:'), sandboxes: count(ended, 'confined:')}).toEqual({trees: 1, sandboxes: 1})
  })
})
