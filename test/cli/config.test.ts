// The config file (SPEC "Sandbox", Config file), as run and sandbox read it.
import {existsSync, mkdirSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
beforeEach(() => {
  world = new World('config')
  world.file('f.txt', 'x\n')
})
afterEach(() => world.dispose())

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')

describe('a bad config file', () => {
  for (const command of [['run', 'true'], ['sandbox']]) {
    it(`stops hmm ${command[0]} with one line naming the file and the key`, async () => {
      world.write(configFile(), 'write = "~/.m2"\n')
      const result = await world.hmm(command)
      expect(result.stderr).toBe('hmm: ~/.config/hmm/config.toml: write: expected a list of paths\n')
      expect(result.exitCode).toBe(1)
      // Refused before anything was made.
      const made = existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(entry => /^[0-9a-z]{6}$/.test(entry)) : []
      expect(made).toEqual([])
    })
  }

  it('that is not TOML names the file and the line', async () => {
    world.write(configFile(), 'hide = [\n')
    const result = await world.hmm(['run', 'true'])
    expect(result.stderr).toMatch(/^hmm: ~\/\.config\/hmm\/config\.toml: line \d+: [^\n]+\n$/)
    expect(result.exitCode).toBe(1)
  })

  it('is looked for in $XDG_CONFIG_HOME/hmm', async () => {
    const xdg = join(world.root, 'xdg')
    world.write(join(xdg, 'hmm', 'config.toml'), 'isolation = "some"\n')
    const result = await world.hmm(['sandbox'], {env: {...world.env, XDG_CONFIG_HOME: xdg}})
    expect(result.stderr).toBe(`hmm: ${xdg}/hmm/config.toml: isolation: expected "full" or "landlock-only"\n`)
    expect(result.exitCode).toBe(1)
  })
})

describe('a good config file', () => {
  it('adds its write paths to the sandbox', async () => {
    const m2 = join(world.home, '.m2')
    mkdirSync(m2)
    world.write(configFile(), 'write = ["~/.m2"]\n')
    const shown = await world.hmm(['sandbox'])
    expect(shown.exitCode).toBe(0)
    expect(shown.stdout).toContain(`may write:`)
    expect(shown.stdout.split('may not read:')[0]).toContain(`  ${m2}\n`)
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `echo built > '${m2}/artifact' && echo ok`])
    expect(result.stdout).toBe('ok\n')
  })
})
