// The command cannot take all of the user's processes (attacker's review 9,
// F3): with a small RLIMIT_NPROC it forked until refused, and then the
// user's `hmm stop` could not start. Now it is given half of what the user
// may still start, and `hmm stop` (Node and its threads, the helper) runs
// while the command holds all it may. The kernel does not count root's
// tasks, so this is a plain user's test (test/helper/nproc.test.ts tries
// the bound itself as root too, under another user ID).

import {execa} from 'execa'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, Started, userTasks, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const tasks = () => userTasks(process.getuid!())

// Forks sleepers until the kernel refuses, then says so and holds them.
const FORKER = `
import os, time
while True:
    try:
        pid = os.fork()
    except BlockingIOError:
        break
    if pid == 0:
        time.sleep(1000)
        os._exit(0)
print('held', flush=True)
time.sleep(1000)
`

describe('hmm run under a process limit', () => {
  it.skipIf(process.getuid!() === 0)('leaves the user room to run hmm stop while the command holds every process it may start', async () => {
    world = new World('nproc')
    const limit = `--nproc=${tasks() + 150}`
    const run = new Started(
      execa('prlimit', [limit, process.execPath, BIN, 'run', '-n', 'forks', 'python3', '-c', FORKER], {
        cwd: world.origin,
        env: world.env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        detached: true,
      }),
      ['run'],
    )
    await run.line('held')
    const {id} = workspaceLine(run.stderr)
    const stop = await execa('prlimit', [limit, process.execPath, BIN, 'stop', 'forks'], {cwd: world.origin, env: world.env, extendEnv: false, reject: false})
    expect({exitCode: stop.exitCode, stderr: stop.stderr}).toEqual({exitCode: 0, stderr: `hmm: stopped workspace ${id} (forks)`})
    expect((await run.result()).exitCode).toBe(143)
  })
})
