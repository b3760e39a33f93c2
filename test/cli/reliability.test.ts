// Many runs at once, a killed hmm, a terminal.
import Database from 'better-sqlite3'
import {execa} from 'execa'
import {mkdirSync, readdirSync, readlinkSync} from 'node:fs'
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

  it('waits for another hmm making the registry at the same moment, instead of "database is locked"', async () => {
    // Another hmm's first open: the registry exists but is not in WAL yet and
    // that hmm holds its write lock while switching it. SQLite's own switch
    // to WAL reads first and then upgrades to a write without waiting.
    world = new World('registry-race')
    mkdirSync(world.dataDir, {recursive: true, mode: 0o700})
    const registry = join(world.dataDir, 'registry.sqlite')
    const other = new Database(registry)
    other.exec('BEGIN IMMEDIATE')
    const started = world.start(['run', 'true'])
    const opened = () => {
      try {
        return readdirSync(`/proc/${started.child.pid}/fd`).some(fd => readlinkSync(`/proc/${started.child.pid}/fd/${fd}`) === registry)
      } catch {
        return false
      }
    }
    // Until hmm has the registry open (or has given up), and a moment more.
    while (started.child.exitCode === null && !opened()) await new Promise(resolve => setTimeout(resolve, 10))
    await Promise.race([started.child, new Promise(resolve => setTimeout(resolve, 500))])
    other.exec('COMMIT')
    other.close()
    const result = await started.result()
    expect(result.stderr).not.toMatch(/locked/)
    expect(result.exitCode).toBe(0)
  })

  it('runs 16 at once with a fresh data directory while the CPU is busy, again and again', async () => {
    world = new World('concurrent-16')
    await world.gitRepo()
    const busy = [0, 1].map(() => execa('sh', ['-c', 'while :; do :; done'], {reject: false}))
    try {
      for (let round = 0; round < 2; round++) {
        const env = {...world.env, HMM_HOME: join(world.root, `data-${round}`)}
        const results = await Promise.all(Array.from({length: 16}, () => world.hmm(['run', 'true'], {env})))
        for (const result of results) expect(result.exitCode, result.stderr).toBe(0)
      }
    } finally {
      for (const loop of busy) loop.kill('SIGKILL')
    }
  }, 300_000)

  it('lets only one of two runs racing for a name have it', async () => {
    world = new World('name-race')
    const results = await Promise.all([0, 1, 2, 3].map(() => world.hmm(['run', '-n', 'same', 'true'])))
    expect(results.filter(result => result.exitCode === 0)).toHaveLength(1)
    expect(results.filter(result => result.stderr.includes('already has a workspace named same'))).toHaveLength(3)
  })

  it('stays running after hmm is SIGKILLed until the command ends, then done', async () => {
    world = new World('sigkill')
    const marker = join(world.root, 'finish')
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
    const marker = join(world.root, 'finish')
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
