// Property test (SPEC `hmm apply` › State): one workspace taken through a
// random sequence of hmm exec (edits, commits), hmm merge, hmm apply and
// commits made in the origin. After each hmm command, what `hmm ls` WORK
// shows, what `hmm log` lists and what `hmm apply --check` says agree; at
// the end `hmm rm` refuses exactly when WORK holds work.
//
// Each case is one workspace and a few steps: a dozen real hmm processes
// or two, so RUNS stays small (HMM_STATE_RUNS, default 3; HMM_PROPERTY_SEED
// and HMM_PROPERTY_PATH replay a failure, as in workspaces.test.ts).
import {execa} from 'execa'
import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

const RUNS = Number(process.env.HMM_STATE_RUNS ?? 3)
const SEED = Number(process.env.HMM_PROPERTY_SEED ?? 20261207)
const PATH = process.env.HMM_PROPERTY_PATH

type Step =
  | {kind: 'edit'; file: 'a.txt' | 'b.txt' | 'new'}
  | {kind: 'commit'}
  | {kind: 'editCommit'; file: 'a.txt' | 'b.txt' | 'new'}
  | {kind: 'merge'}
  | {kind: 'apply'}
  | {kind: 'originCommit'; what: 'own' | 'all'}

const file = fc.constantFrom('a.txt' as const, 'b.txt' as const, 'new' as const)
const step: fc.Arbitrary<Step> = fc.oneof(
  file.map(file => ({kind: 'edit' as const, file})),
  fc.constant({kind: 'commit' as const}),
  file.map(file => ({kind: 'editCommit' as const, file})),
  fc.constant({kind: 'merge' as const}),
  fc.constant({kind: 'apply' as const}),
  fc.constantFrom('own' as const, 'all' as const).map(what => ({kind: 'originCommit' as const, what})),
)
const scenario = fc.record({first: file, steps: fc.array(step, {minLength: 3, maxLength: 6})})

let world: World

interface Listed {
  id: string
  commits: number | null
  files: number | null
  taken: string | null
}

async function checkScenario(s: {first: 'a.txt' | 'b.txt' | 'new'; steps: Step[]}, n: number) {
  // Each case its own origin, so cases do not see each other's workspaces.
  const origin = `${world.origin}-${n}`
  await execa('mkdir', ['-p', origin])
  const at = {cwd: origin}
  const g = (args: string[]) => execa('git', args, {cwd: origin, env: world.env, extendEnv: false})
  await g(['init', '-q'])
  await execa('sh', ['-c', 'printf "a\\n" > a.txt && printf "b\\n" > b.txt'], {cwd: origin})
  await g(['add', '-A'])
  await g(['commit', '-qm', 'base'])
  let count = 0
  // A line of its own each time: no edit ever puts a file back as it was, no two commits are the same.
  const edit = (name: string) => `echo "edit ${++count}" >> ${name === 'new' ? `new-${count}.txt` : name}`
  const ws = workspaceLine((await world.hmm(['run', '-n', 'x', 'sh', '-c', edit(s.first)], at)).stderr)
  const label = `${ws.id} (x)`

  const agree = async (after: string) => {
    const work = (JSON.parse((await world.hmm(['ls', '--json'], at)).stdout) as Listed[]).find(entry => entry.id === ws.id)!
    const logged = (await world.hmm(['log', 'x'], at)).stdout.split('\n').filter(Boolean).length
    const check = (await world.hmm(['apply', '--check', 'x'], at)).stderr
    const why = `after ${after}: WORK ${JSON.stringify(work)}, log ${logged} commits, apply --check: ${check}`
    const nothingLeft = work.commits === 0 && work.files === 0
    // Applied: its files are all in the origin's, whatever was committed since; else log lists what WORK counts.
    if (work.taken !== 'applied') expect(logged, why).toBe(work.commits)
    const takesNothing = check === `hmm: workspace ${label} is already applied to ${origin}\n` || check === `hmm: workspace ${label} changed nothing\n`
    // Taken back by any route, or nothing done: apply has nothing to take, and the other way round (the edits never undo each other).
    expect(takesNothing, why).toBe(nothingLeft)
    return nothingLeft
  }

  let left = await agree('run')
  for (const next of s.steps) {
    let hmmRan = true
    if (next.kind === 'edit') await world.hmm(['exec', 'x', 'sh', '-c', edit(next.file)], at)
    else if (next.kind === 'commit') await world.hmm(['exec', 'x', 'sh', '-c', `git add -A && git commit -qm c${++count} || true`], at)
    else if (next.kind === 'editCommit') await world.hmm(['exec', 'x', 'sh', '-c', `${edit(next.file)} && git add -A && git commit -qm c${count}`], at)
    else if (next.kind === 'merge') {
      const merged = await world.hmm(['merge', 'x'], at)
      // Stopped at conflicts: given up, as a user who would rather apply.
      if (merged.stderr.includes('stopped at conflicts')) await g(['merge', '--abort'])
    } else if (next.kind === 'apply') await world.hmm(['apply', 'x'], at)
    else {
      hmmRan = false
      // Its own file, or everything it has uncommitted (what apply wrote) too.
      await execa('sh', ['-c', `echo "origin ${++count}" > origin-${count}.txt`], {cwd: origin})
      await g(['add', ...(next.what === 'own' ? [`origin-${count}.txt`] : ['-A'])])
      await g(['commit', '-qm', `origin ${++count}`])
    }
    // WORK is as hmm last looked: compared after hmm's own commands only.
    if (hmmRan) left = await agree(JSON.stringify(next))
  }
  // hmm diff looks again (and records WORK) after the origin's own commit.
  if (s.steps.at(-1)?.kind === 'originCommit') {
    await world.hmm(['diff', '--stat', 'x'], at)
    left = await agree('a look')
  }
  const removed = await world.hmm(['rm', 'x'], at)
  expect(removed.exitCode, `rm: ${removed.stderr}`).toBe(left ? 0 : 1)
}

describe('one state for WORK, log, apply and rm', () => {
  beforeAll(() => {
    world = new World('property-state')
  })
  afterAll(() => world?.dispose())

  it(
    `agree after random exec, merge, apply and origin commits (${RUNS} cases, seed ${SEED})`,
    async () => {
      let n = 0
      await fc.assert(
        fc.asyncProperty(scenario, async s => {
          try {
            await checkScenario(s, n++)
          } catch (error) {
            world.keepOnFailure()
            throw error
          }
        }),
        {numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: true, verbose: 1},
      )
    },
    RUNS * 120_000,
  )
})
