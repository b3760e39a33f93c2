// What Node does before and after hmm runs: bin/run.js, started as a program
// (npm links it so), keeps Node from reading NODE_EXTRA_CA_CERTS's
// certificates as it starts, and gives the variable back to what hmm starts;
// it ends the process only once all hmm wrote has gone.
import {execa} from 'execa'
import {symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, hmmCommand, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** Node's warning when it reads NODE_EXTRA_CA_CERTS as it starts and the file is not there. */
const READ_AT_START = 'Ignoring extra certs from'
const SHOWS_CERTS = 'printf "[%s] [%s]" "$NODE_EXTRA_CA_CERTS" "${HMM_NODE_EXTRA_CA_CERTS-unset}"'

describe('NODE_EXTRA_CA_CERTS', () => {
  it('is not read by the hmm a user starts, and reaches the command as it was', async () => {
    world = new World('entry-certs')
    world.file('a', 'a\n')
    // As npm links it: a program on PATH, a link to bin/run.js.
    const linked = join(world.root, 'hmm')
    symlinkSync(BIN, linked)
    const env = {...world.env, NODE_EXTRA_CA_CERTS: join(world.root, 'no-such-bundle.pem')}
    const hmm = (...args: string[]) => execa(linked, args, {cwd: world.origin, env, extendEnv: false, reject: false, stdin: 'ignore'})

    const listed = await hmm('ls')
    expect(listed.exitCode).toBe(0)
    expect(listed.stderr).not.toContain(READ_AT_START)

    const ran = await hmm('run', '--rm', 'sh', '-c', SHOWS_CERTS)
    expect(ran.exitCode, ran.stderr).toBe(0)
    expect(ran.stderr).not.toContain(READ_AT_START)
    expect(ran.stdout).toBe(`[${env.NODE_EXTRA_CA_CERTS}] [unset]`)
  })
})

describe('the end of a command', () => {
  // Node makes a pipe it writes to non-blocking: what does not fit waits in a queue, which the process must not leave
  // behind. The pipe is full when hmm starts (64 KiB, Linux's default size), its reader not yet reading.
  it('comes after the last line hmm wrote has gone into a pipe that was full', async () => {
    world = new World('entry-full-pipe')
    world.file('a', 'a\n')
    const filled = `{ head -c 65536 /dev/zero; ${hmmCommand('diff', 'nosuch')}; echo "rc=$?" >&2; } 2>&1 | { sleep 1; tr -d '\\0'; }`
    const result = await execa('sh', ['-c', filled], {cwd: world.origin, env: world.env, extendEnv: false, reject: false, stdin: 'ignore'})
    expect(result.stdout).toBe('hmm: no workspace nosuch\nrc=1')
  })
})
