// What Node does before hmm runs: bin/run.js, started as a program (npm links
// it so), keeps Node from reading NODE_EXTRA_CA_CERTS's certificates as it
// starts, and gives the variable back to what hmm starts.
import {execa} from 'execa'
import {symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World} from '../world.js'

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
