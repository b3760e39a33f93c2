// Many runs at once, a killed hmm, a terminal.
import {execa} from 'execa'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

async function stateOf(id: string): Promise<string> {
  const entries = JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Array<{id: string; state: string}>
  return entries.find(entry => entry.id === id)?.state ?? 'missing'
}

describe('reliability', () => {
  it('runs 8 workspaces at once in one directory, all with distinct IDs', async () => {
    world = new World('concurrent')
    await world.gitRepo()
    const results = await Promise.all(Array.from({length: 8}, (_, n) => world.hmm(['run', '-n', `w${n}`, 'sh', '-c', `echo ${n} > mine`])))
    for (const result of results) expect(result.exitCode, result.stderr).toBe(0)
    const ids = results.map(result => workspaceLine(result.stderr).id)
    expect(new Set(ids).size).toBe(8)
    const listed = JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Array<{id: string; state: string}>
    expect(listed.map(entry => entry.id).sort()).toEqual([...ids].sort())
    expect(listed.every(entry => entry.state === 'done')).toBe(true)
  })

  it('lets only one of two runs racing for a name have it', async () => {
    world = new World('name-race')
    const results = await Promise.all([0, 1, 2, 3].map(() => world.hmm(['run', '-n', 'same', 'true'])))
    expect(results.filter(result => result.exitCode === 0)).toHaveLength(1)
    expect(results.filter(result => result.stderr.includes('already has a workspace named same'))).toHaveLength(3)
  })

  it('stays running after hmm is SIGKILLed until the command ends, then done', async () => {
    world = new World('sigkill')
    const marker = join(world.home, 'finish')
    const started = world.start(['run', 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const {id} = workspaceLine(started.stderr)
    started.child.kill('SIGKILL')
    // Not started.result(): the command still holds hmm's stdout open.
    await new Promise(resolve => started.child.once('exit', resolve))
    expect(await stateOf(id)).toBe('running')
    await world.sh(`touch '${marker}'`)
    for (let tries = 0; tries < 100 && (await stateOf(id)) === 'running'; tries++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await stateOf(id)).toBe('done')
    await started.result()
  })

  it('keeps running while something the command left behind holds on', async () => {
    world = new World('background')
    const marker = join(world.home, 'finish')
    const result = await world.hmm(['run', 'sh', '-c', `(while [ ! -e '${marker}' ]; do sleep 0.05; done) >/dev/null 2>&1 & exit 0`])
    const {id} = workspaceLine(result.stderr)
    expect(await stateOf(id)).toBe('running')
    await world.sh(`touch '${marker}'`)
    for (let tries = 0; tries < 100 && (await stateOf(id)) === 'running'; tries++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await stateOf(id)).toBe('done')
  })

  it('gives a terminal program a working terminal (under a pty)', async () => {
    world = new World('pty')
    const result = await execa('script', ['-qec', `stty cols 91 rows 37; '${process.execPath}' '${BIN}' run stty size`, '/dev/null'], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
      reject: false,
    })
    expect(result.exitCode).toBe(0)
    expect(String(result.stdout)).toContain('37 91')
  })
})
