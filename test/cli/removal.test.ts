// Removing a workspace (rm, run --rm): all of it, whatever modes the clone
// and the command left, and nothing outside it, even while a process the
// command left behind races it (issue 10, items 5 and 6) by swapping the
// tree's directories for links to a directory outside as hmm deletes.
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
      // What --rm threw away (the swapper's links) is said; nothing else is.
      const said = result.stderr.replace(/^hmm: workspace .*\n/gm, '').replace(/^hmm: removed workspace \w+, discarding .*\n/m, '')
      outcomes.push({exitCode: result.exitCode, removed: !existsSync(join(world.dataDir, ws.id)), stderr: said})
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

describe('removing a workspace', () => {
  it('removes, as whoever runs hmm, what the clone and the command made read-only or unreadable', async () => {
    const origin = new World('removal-modes')
    try {
      await origin.gitRepo()
      origin.file('ro/inner/f', 'x')
      await origin.sh('chmod 444 ro/inner/f && chmod 555 ro/inner ro')
      const outsideFile = origin.write(join(origin.home, 'outside', 'keep'), 'keep\n')
      const script = [
        'mkdir -p locked/deeper/deepest && touch locked/deeper/f && chmod 0 locked/deeper/deepest locked/deeper && chmod 0 locked',
        'mkdir -p wx && touch wx/f && chmod 333 wx',
        'mkfifo fifo && ln README.md hard && ln -s ../../../../../../outside out-link',
        `ln -s '${join(origin.home, 'outside')}' abs-link`,
      ].join(' && ')
      const kept = workspaceLine((await origin.hmm(['run', 'sh', '-c', script])).stderr)
      const removedAfter = await origin.hmm(['run', '--rm', 'sh', '-c', script])
      expect(removedAfter.exitCode).toBe(0)
      expect(existsSync(join(origin.dataDir, workspaceLine(removedAfter.stderr).id))).toBe(false)
      expect(await origin.hmm(['rm', '-f', kept.id])).toMatchObject({exitCode: 0, stderr: `hmm: removed workspace ${kept.id}\n`})
      expect(existsSync(join(origin.dataDir, kept.id))).toBe(false)
      expect(readdirSync(join(origin.home, 'outside'))).toEqual(['keep'])
      expect(existsSync(outsideFile)).toBe(true)
    } finally {
      await origin.sh('chmod -R u+w ro')
      origin.dispose()
    }
  })
})
