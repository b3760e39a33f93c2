// `hmm rm`, line by line of SPEC.
import {existsSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

describe('hmm rm', () => {
  it('needs at least one workspace', async () => {
    world = new World('rm-none')
    expect(await world.hmm(['rm'])).toMatchObject({exitCode: 1, stderr: 'hmm: rm needs the workspaces to remove\n'})
  })

  it('removes a workspace that changed nothing, by name, ID or prefix, leaving the origin as it was', async () => {
    world = new World('rm-clean')
    await world.gitRepo()
    const status = await world.git(['status', '--porcelain'])
    const a = workspaceLine((await world.hmm(['run', '-n', 'a', 'true'])).stderr)
    const b = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const c = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const result = await world.hmm(['rm', 'a', b.id, c.id.slice(0, 5)])
    expect(result.exitCode).toBe(0)
    for (const ws of [a, b, c]) expect(existsSync(join(world.dataDir, ws.id))).toBe(false)
    expect((await world.hmm(['ls'])).stdout).toBe('')
    expect(await world.git(['status', '--porcelain'])).toBe(status)
  })

  it('refuses a workspace with work never taken back, unless -f', async () => {
    world = new World('rm-work')
    await world.gitRepo()
    const edited = workspaceLine((await world.hmm(['run', '-n', 'edit', 'sh', '-c', 'echo more >> README.md'])).stderr)
    const committed = workspaceLine((await world.hmm(['run', '-n', 'commit', 'sh', '-c', 'git commit -qam wip --allow-empty'])).stderr)
    for (const ws of [edited, committed]) {
      const refused = await world.hmm(['rm', ws.id])
      expect(refused.exitCode).toBe(1)
      expect(refused.stderr).toBe(`hmm: workspace ${ws.id} (${ws.name}) has work that was not merged, applied or pushed (hmm rm -f removes it anyway)\n`)
      expect(existsSync(ws.tree)).toBe(true)
    }
    expect((await world.hmm(['rm', '-f', 'edit', 'commit'])).exitCode).toBe(0)
    expect(existsSync(edited.tree)).toBe(false)
  })

  it('counts a plain directory workspace that changed files as work', async () => {
    world = new World('rm-plain')
    world.file('a.txt', 'a\n')
    const ws = workspaceLine((await world.hmm(['run', 'sh', '-c', 'echo b > b.txt'])).stderr)
    expect((await world.hmm(['rm', ws.id])).exitCode).toBe(1)
    const clean = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    expect((await world.hmm(['rm', clean.id])).exitCode).toBe(0)
  })

  it('reports what it cannot find, still removes the rest, and exits 1', async () => {
    world = new World('rm-continue')
    const ws = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const result = await world.hmm(['rm', 'nope', ws.id, 'x'.repeat(200)])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: no workspace nope$/m)
    expect(result.stderr).toMatch(/^hmm: no workspace x{80}…$/m)
    expect(existsSync(ws.tree)).toBe(false)
  })

  it('removes refs/hmm/<id> from the origin', async () => {
    world = new World('rm-ref')
    await world.gitRepo()
    const ws = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    await world.git(['update-ref', `refs/hmm/${ws.id}`, 'HEAD'])
    expect((await world.hmm(['rm', ws.id])).exitCode).toBe(0)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
  })

  it('removes without -f a workspace whose tree was deleted by hand, and one whose making never finished', async () => {
    world = new World('rm-broken')
    const gone = workspaceLine((await world.hmm(['run', 'sh', '-c', 'echo x > new'])).stderr)
    rmSync(gone.tree, {recursive: true, force: true})
    const half = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const db = new Database(join(world.dataDir, 'registry.sqlite'))
    db.prepare("UPDATE workspaces SET state = 'creating', active = 1 WHERE id = ?").run(half.id)
    db.close()
    expect((await world.hmm(['ls'])).stdout).toContain(`${half.id}  -     broken`)
    const result = await world.hmm(['rm', gone.id, half.id])
    expect(result).toMatchObject({exitCode: 0})
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })

  it('refuses a running workspace; with -f stops everything it runs, then removes it', async () => {
    world = new World('rm-running')
    const marker = join(world.root, 'go')
    const started = world.start(['run', '-n', 'busy', 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const refused = await world.hmm(['rm', 'busy'])
    expect(refused.stderr).toMatch(/^hmm: workspace ([0-9a-z]{6}) \(busy\) is running \(hmm stop \1 ends it; hmm rm -f \1 stops and removes it\)$/m)
    expect(refused.exitCode).toBe(1)
    const forced = await world.hmm(['rm', '-f', 'busy'])
    expect(forced).toMatchObject({exitCode: 0, stderr: expect.stringMatching(/^hmm: removed workspace [0-9a-z]{6} \(busy\)\n$/)})
    await started.result()
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })
})
