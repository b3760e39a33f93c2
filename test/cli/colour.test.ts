// Colour (SPEC "Output conventions"): on a terminal only, never with
// NO_COLOR: STATE running green and broken red, WORK taken back dim, errors
// red, warnings yellow. Both the coloured and the plain output are asserted.
import {execa} from 'execa'
import {rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const ESC = '\x1b['
const CODES = new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g')

/** The listing with each AGE cell made the same: two listings a second apart differ there only. */
function ageless(listing: string): string {
  return listing.replace(/ +\d+[smhd] /g, ' AGE ')
}

/** hmm under a pseudo-terminal (stdout and stderr both the terminal), with or without NO_COLOR. */
async function onTerminal(args: string, noColor: boolean): Promise<string> {
  const env = {...world.env}
  if (!noColor) delete env.NO_COLOR
  const result = await execa('script', ['-qfec', `'${process.execPath}' '${BIN}' ${args}`, '/dev/null'], {
    cwd: world.origin,
    env,
    extendEnv: false,
    reject: false,
    // The output is compared whole, its last newline included.
    stripFinalNewline: false,
  })
  return String(result.stdout).replaceAll('\r\n', '\n')
}

describe('colour', () => {
  it('paints STATE and WORK in hmm ls on a terminal, and nothing with NO_COLOR or into a pipe', async () => {
    world = new World('colour-ls')
    await world.gitRepo()
    const broken = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    rmSync(broken.tree, {recursive: true})
    const applied = workspaceLine((await world.hmm(['run', 'sh', '-c', 'echo x > x.txt'])).stderr)
    expect((await world.hmm(['apply', applied.id])).exitCode).toBe(0)
    const running = world.start(['run', 'sh', '-c', 'echo ready; sleep 600'])
    await running.line('ready')

    const coloured = await onTerminal('ls', false)
    expect(coloured).toContain(`${ESC}32mrunning${ESC}39m`)
    expect(coloured).toContain(`${ESC}31mbroken${ESC}39m`)
    expect(coloured).toContain(`${ESC}2mapplied${ESC}22m`)
    // Coloured or not, the columns line up the same.
    const plain = await onTerminal('ls', true)
    expect(plain).not.toContain(ESC)
    expect(ageless(coloured.replace(CODES, ''))).toBe(ageless(plain))
    const env = {...world.env}
    delete env.NO_COLOR
    const piped = await world.hmm(['ls'], {env})
    expect(piped.stdout).not.toContain(ESC)
    expect(ageless(piped.stdout)).toBe(ageless(plain))
  })

  it('says errors in red and warnings in yellow on a terminal only', async () => {
    world = new World('colour-messages')
    expect(await onTerminal('lst', false)).toBe(`${ESC}31mhmm: unknown command lst; did you mean ls?${ESC}39m\n`)
    expect(await onTerminal('lst', true)).toBe('hmm: unknown command lst; did you mean ls?\n')
    const env = {...world.env}
    delete env.NO_COLOR
    expect((await world.hmm(['lst'], {env})).stderr).toBe('hmm: unknown command lst; did you mean ls?\n')

    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean'])
    await world.hmm(['run', '-n', 'w', 'sh', '-c', 'echo a >> README.md && git commit -qam a && echo b > b.txt'])
    const merged = await onTerminal('merge w', false)
    expect(merged).toContain(`${ESC}33mhmm: workspace `)
    expect(merged).toContain(`has changes it did not commit, which are not merged${ESC}39m`)
  })
})
