// hmm reading a workspace while a process its command left behind races it
// (issue 11, item 4): the process swaps files and directories of the tree
// for symbolic links to a secret outside, over and over, while the user
// runs `hmm diff` (allowed while the workspace runs). Git reading the tree
// for hmm looks at a file, then opens it by name: the open may meet the
// link. Whatever git reads there, the secret's bytes must never come out.
// Without confinement the file swap won in one diff of 5 to 25 here (the
// load decides), the directory swap in none of 20 (git checks the leading
// directories first), but either may.
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {join} from 'node:path'
import {buildSwapper, killSwappers} from '../swapper.js'
import {World, workspaceLine} from '../world.js'

/** Bounded: enough diffs for the race to be won many times over where nothing stops it. */
const FILE_DIFFS = 30
const DIR_DIFFS = 5
const PAIRS = 10
/** Longer than the swapper's decoys (16 bytes): a read through the link takes that many of its first bytes. */
const SECRET = 'SECRET-KEY-7f3a9c-SECRET-KEY-7f3a9c-SECRET-KEY-7f3a9c\n'
const LEAKED = SECRET.slice(0, 16)

let world: World
let swapper: string

beforeAll(async () => {
  world = new World('read-race')
  await world.gitRepo()
  world.write(join(world.home, '.ssh', 'id_rsa'), SECRET)
  // A key no list names: hmm's git reads the home composed as the command's (sandbox/home.ts), where it is not.
  world.write(join(world.home, '.docker', 'key.pem'), SECRET)
  swapper = buildSwapper(world.root)
})
afterEach(context => {
  killSwappers(swapper)
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => world.dispose())

/** Starts the swapper in a new workspace (it keeps swapping after the command ends), then diffs it `times` times. */
async function raced(swap: string, times: number): Promise<string[]> {
  const started = await world.hmm(['run', 'sh', '-c', `'${swapper}' "$PWD" ${swap}`])
  expect(started.exitCode, started.stderr).toBe(0)
  const ws = workspaceLine(started.stderr)
  const leaks: string[] = []
  for (let round = 0; round < times; round++) {
    const diff = await world.hmm(['diff', ws.id])
    if (`${diff.stdout}${diff.stderr}`.includes(LEAKED)) leaks.push(`diff ${round}: exit ${diff.exitCode}`)
  }
  return leaks
}

describe('hmm diff raced by a process the command left behind', () => {
  it('never shows the bytes of a secret a file of the tree was swapped for', {timeout: 240_000}, async () => {
    expect(await raced(`'${join(world.home, '.ssh', 'id_rsa')}' ${PAIRS} file`, FILE_DIFFS)).toEqual([])
  })

  it('never shows the bytes of a file no list names, in the home, a file of the tree was swapped for', {timeout: 240_000}, async () => {
    expect(await raced(`'${join(world.home, '.docker', 'key.pem')}' ${PAIRS} file`, FILE_DIFFS)).toEqual([])
  })

  it('never shows the bytes of a secret a directory of the tree was swapped for a link to', {timeout: 120_000}, async () => {
    expect(await raced(`'${join(world.home, '.ssh')}' ${PAIRS} toggle id_rsa`, DIR_DIFFS)).toEqual([])
  })
})
