// `hmm path [WS]` and `hmm prune [-a]`, line by line of SPEC.
import {execa} from 'execa'
import {existsSync, mkdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

async function ids(args: string[] = ['ls', '--json']): Promise<string[]> {
  return (JSON.parse((await world.hmm(args)).stdout) as Array<{id: string}>).map(entry => entry.id)
}

describe('hmm path', () => {
  it('prints the tree of the named workspace, or of the latest, on stdout', async () => {
    world = new World('path')
    const first = workspaceLine((await world.hmm(['run', '-n', 'parser', 'true'])).stderr)
    const second = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    expect(await world.hmm(['path', 'parser'])).toEqual({exitCode: 0, stdout: `${first.tree}\n`, stderr: ''})
    expect((await world.hmm(['path'])).stdout).toBe(`${second.tree}\n`)
    expect((await world.hmm(['path', second.id.slice(0, 4)])).stdout).toBe(`${second.tree}\n`)
    const cd = await execa('sh', ['-c', `cd "$('${process.execPath}' '${BIN}' path parser)" && pwd`], {cwd: world.origin, env: world.env, extendEnv: false})
    expect(String(cd.stdout)).toBe(first.tree)
  })

  it("on a terminal, says on stderr that git run in the tree obeys the workspace's repository (attack-report finding 7)", async () => {
    world = new World('path-terminal')
    const ws = workspaceLine((await world.hmm(['run', '-n', 'parser', 'true'])).stderr)
    // script(1) gives the command a terminal; $(...) takes stdout only, as in `cd "$(hmm path parser)"`.
    const shown = await execa('script', ['-qfec', `echo "<$('${process.execPath}' '${BIN}' path parser)>"`, '/dev/null'], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
    })
    expect(String(shown.stdout).replaceAll('\r\n', '\n')).toBe(
      "hmm: git run in that directory outside hmm (by you, a shell prompt or an editor) runs what the workspace's .git/config says, " +
        `unconfined: work there with hmm exec parser, look with hmm diff and hmm log\n<${ws.tree}>`,
    )
  })

  it('fails with one line for an unknown, a missing default and a broken workspace', async () => {
    world = new World('path-errors')
    expect(await world.hmm(['path'])).toEqual({exitCode: 1, stdout: '', stderr: `hmm: ${world.origin} has no workspaces\n`})
    const ws = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    expect(await world.hmm(['path', 'nope'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: no workspace nope\n'})
    rmSync(ws.tree, {recursive: true})
    expect(await world.hmm(['path'])).toEqual({exitCode: 1, stdout: '', stderr: `hmm: workspace ${ws.id} is broken (hmm rm removes it)\n`})
  })
})

describe('hmm prune', () => {
  it('removes what rm would remove without -f and is not running, naming each; keeps the rest', async () => {
    world = new World('prune')
    await world.gitRepo()
    const untouched = workspaceLine((await world.hmm(['run', '-n', 'untouched', 'true'])).stderr)
    const working = workspaceLine((await world.hmm(['run', '-n', 'working', 'sh', '-c', 'echo work > work.txt'])).stderr)
    const applied = workspaceLine((await world.hmm(['run', '-n', 'applied', 'sh', '-c', 'echo taken > taken.txt'])).stderr)
    expect((await world.hmm(['apply', 'applied'])).exitCode).toBe(0)
    const broken = workspaceLine((await world.hmm(['run', '-n', 'broken', 'true'])).stderr)
    rmSync(broken.tree, {recursive: true})
    const marker = join(world.root, 'finish')
    const child = execa(process.execPath, [BIN, 'run', '-n', 'running', 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
      reject: false,
    })
    await new Promise<void>(resolve => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()))
    // Another directory's untouched workspace is left to -a.
    const elsewhere = join(world.home, 'elsewhere')
    mkdirSync(elsewhere)
    const far = workspaceLine((await world.hmm(['run', 'true'], {cwd: elsewhere})).stderr)

    const pruned = await world.hmm(['prune'])
    expect(pruned.exitCode).toBe(0)
    expect(pruned.stdout).toBe('')
    expect(pruned.stderr.split('\n').filter(Boolean).sort()).toEqual(
      [
        `hmm: removed workspace ${untouched.id} (untouched)`,
        `hmm: removed workspace ${applied.id} (applied)`,
        `hmm: removed workspace ${broken.id} (broken)`,
      ].sort(),
    )
    const left = await ids(['ls', '-a', '--json'])
    expect(left).toContain(working.id)
    expect(left).toContain(far.id)
    expect(left).toHaveLength(3)
    expect(existsSync(working.tree)).toBe(true)
    expect(existsSync(untouched.tree)).toBe(false)

    // Nothing more to prune here: no output.
    expect(await world.hmm(['prune'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    await world.sh(`touch '${marker}'`)
    await child
    const all = (await world.hmm(['prune', '-a'])).stderr.split('\n').filter(Boolean)
    expect(all).toHaveLength(2)
    expect(all).toContain(`hmm: removed workspace ${far.id}`)
    expect(all.find(line => line.endsWith(' (running)'))).toMatch(/^hmm: removed workspace [0-9a-z]{6} \(running\)$/)
    expect(await ids(['ls', '-a', '--json'])).toEqual([working.id])
  })
})
