// Removing a workspace while a process the command left behind races it
// (issue 10, items 5 and 6): the process swaps the tree's directories for
// links to a directory outside, on a tight loop, while hmm deletes. Nothing
// outside the tree may be deleted, in any round.
import {existsSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {buildSwapper, killSwappers} from '../swapper.js'
import {World, workspaceLine} from '../world.js'

const ROUNDS = 4
const PAIRS = 40
const VICTIMS = Array.from({length: 20}, (_, i) => `v${i}`)

let world: World
let swapper: string
let victim: string

beforeAll(() => {
  world = new World('removal')
  world.file('a.txt', 'a\n')
  swapper = buildSwapper(world.root)
  // Outside the tree, the user's own (root's, as root): what the swap points at.
  victim = join(world.home, 'victim')
  mkdirSync(victim)
})
afterEach(context => {
  killSwappers(swapper)
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => world.dispose())

function plantVictim(): void {
  for (const name of VICTIMS) writeFileSync(join(victim, name), 'keep\n')
}

/** The victim's files deleted in this round. */
function lost(): string[] {
  const left = new Set(readdirSync(victim))
  return VICTIMS.filter(name => !left.has(name))
}

/**
 * Runs the swapper in a new workspace: it is set up when the command ends, and keeps swapping.
 * Even rounds swap each directory once, when its first file is deleted; odd rounds all the time.
 */
function swapping(round: number): string[] {
  return ['sh', '-c', `'${swapper}' "$PWD" '${victim}' ${PAIRS} ${round % 2 ? 'toggle' : 'inotify'}`]
}

describe('removing a workspace raced by a process it left behind', () => {
  it('hmm run --rm never deletes through a directory swapped for a link outside', async () => {
    const losses: string[] = []
    const outcomes: Array<{exitCode: number; removed: boolean; stderr: string}> = []
    for (let round = 0; round < ROUNDS; round++) {
      plantVictim()
      const result = await world.hmm(['run', '--rm', ...swapping(round)])
      const ws = workspaceLine(result.stderr)
      killSwappers(swapper)
      if (lost().length > 0) losses.push(`round ${round}: lost ${lost().join(' ')}`)
      outcomes.push({exitCode: result.exitCode, removed: !existsSync(join(world.dataDir, ws.id)), stderr: result.stderr.replace(/^hmm: workspace .*\n/gm, '')})
    }
    expect(losses).toEqual([])
    expect(outcomes).toEqual(Array(ROUNDS).fill({exitCode: 0, removed: true, stderr: ''}))
  })

  it('hmm rm -f never deletes through a directory swapped for a link outside', async () => {
    const losses: string[] = []
    const outcomes: Array<{exitCode: number; removed: boolean; stderr: string}> = []
    for (let round = 0; round < ROUNDS; round++) {
      plantVictim()
      const ws = workspaceLine((await world.hmm(['run', ...swapping(round)])).stderr)
      const result = await world.hmm(['rm', '-f', ws.id])
      killSwappers(swapper)
      if (lost().length > 0) losses.push(`round ${round}: lost ${lost().join(' ')}`)
      outcomes.push({exitCode: result.exitCode, removed: !existsSync(join(world.dataDir, ws.id)), stderr: result.stderr.replace(ws.id, 'ID')})
    }
    expect(losses).toEqual([])
    expect(outcomes).toEqual(Array(ROUNDS).fill({exitCode: 0, removed: true, stderr: 'hmm: removed workspace ID\n'}))
  })
})
