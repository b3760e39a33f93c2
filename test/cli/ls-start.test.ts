// What the listing path (bare `hmm`, `hmm ls`) loads, and how it ends. Its
// time against `node -e 0` is npm run bench's to measure (SPEC: within
// 1.3x); these cases keep out what made it slower before, each a
// millisecond or more of a listing of 70: Node modules it has no use for,
// and Node's wait at a natural exit for V8's background work (compiling
// what the listing ran) and the freeing of the whole heap. The start of
// `hmm run` keeps out a package that cost it as much.
import {execa} from 'execa'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, PROJECT, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** Preloaded into hmm's Node: at exit, writes the modules Node loaded and whether the event loop ran dry (beforeExit). */
const PROBE = `
const {writeFileSync} = require('node:fs')
let ranDry = false
process.on('beforeExit', () => { ranDry = true })
process.on('exit', () => writeFileSync(process.env.PROBE_OUT, JSON.stringify({modules: process.moduleLoadList, ranDry})))
`

async function probed(args: string[]): Promise<{stdout: string; modules: string[]; ranDry: boolean}> {
  const probe = world.write(join(world.root, 'probe.cjs'), PROBE)
  const out = join(world.root, 'probe.json')
  const result = await execa(process.execPath, ['--require', probe, BIN, ...args], {
    cwd: world.origin,
    env: {...world.env, PROBE_OUT: out},
    extendEnv: false,
    stdin: 'ignore',
  })
  return {stdout: String(result.stdout), ...(JSON.parse(readFileSync(out, 'utf8')) as {modules: string[]; ranDry: boolean})}
}

describe('listing', () => {
  it('loads none of node:module, node:os, node:tty, node:net and node:child_process into a pipe, and ends once it has written', async () => {
    world = new World('ls-start')
    await world.hmm(['run', '-n', 'one', 'true'])
    // Not -l: it measures each workspace's disk space with the helper (native/helper.ts diskUsage), a child process.
    for (const args of [[], ['ls'], ['ls', '-a'], ['ls', '--json']]) {
      const listed = await probed(args)
      expect(listed.stdout, args.join(' ')).toContain('one')
      for (const module of ['module', 'os', 'tty', 'net', 'child_process']) {
        expect(listed.modules, `hmm ${args.join(' ')}: node:${module}`).not.toContain(`NativeModule ${module}`)
      }
      expect(listed.ranDry, `hmm ${args.join(' ')}`).toBe(false)
    }
  })
})

describe('hmm run, exec and diff', () => {
  it("start from a bundle without the debug package oclif's logger loads (it looks at the terminal as it loads)", () => {
    const bundle = readFileSync(join(PROJECT, 'dist', 'start.bundle.cjs'), 'latin1')
    expect(bundle).toContain('node_modules/@oclif/core/lib/logger.js')
    expect(bundle).not.toContain('node_modules/debug/')
  })
})
