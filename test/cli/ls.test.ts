// `hmm ls` and bare `hmm`, line by line of SPEC.
import {mkdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

describe('hmm ls', () => {
  it('prints nothing at all when there are no workspaces', async () => {
    world = new World('ls-empty')
    for (const args of [[], ['ls'], ['ls', '-a']]) expect(await world.hmm(args)).toEqual({exitCode: 0, stdout: '', stderr: ''})
    expect((await world.hmm(['ls', '--json'])).stdout).toBe('[]\n')
  })

  it("lists the working directory's workspaces oldest first, in aligned columns with ~ paths; bare hmm the same", async () => {
    world = new World('ls-rows')
    const first = workspaceLine((await world.hmm(['run', '-n', 'parser', 'true'])).stderr)
    const second = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const listing = await world.hmm(['ls'])
    expect(listing.stderr).toBe('')
    // An age of 10s or more is a character wider (a loaded machine takes that long): its padding goes with it.
    const ages = (text: string) => text.replace(/ +\d+s  -/g, ' Ns  -')
    expect(ages(listing.stdout)).toBe(
      'ID      NAME    STATE  AGE  WORK  ORIGIN\n' + `${first.id}  parser  done Ns  -     ~/src/proj\n` + `${second.id}  -       done Ns  -     ~/src/proj\n`,
    )
    expect(ages((await world.hmm([])).stdout)).toBe(ages(listing.stdout))
  })

  it('shows the control, bidirectional and invisible characters of an origin path as ? and <U+...>', async () => {
    world = new World('ls-bidi')
    const origin = join(world.home, 'src', 'a\u202eb\u2066c\nd')
    mkdirSync(origin)
    await world.hmm(['run', 'true'], {cwd: origin})
    expect((await world.hmm(['ls'], {cwd: origin})).stdout).toMatch(/  ~\/src\/a<U\+202E>b<U\+2066>c\?d\n$/)
  })

  it("shows only this directory's workspaces, every directory's with -a", async () => {
    world = new World('ls-all')
    world.file('sub/x', 'x')
    const here = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const there = workspaceLine((await world.hmm(['run', 'true'], {cwd: join(world.origin, 'sub')})).stderr)
    const local = (await world.hmm(['ls'])).stdout
    expect(local).toContain(here.id)
    expect(local).not.toContain(there.id)
    const all = (await world.hmm(['ls', '-a'])).stdout
    expect(all).toContain(here.id)
    expect(all).toMatch(new RegExp(`${there.id}  -     done   +\\d+s  -     ~/src/proj/sub`))
  })

  it('prints JSON for scripts', async () => {
    world = new World('ls-json')
    const ws = workspaceLine((await world.hmm(['run', '-n', 'p', 'true'])).stderr)
    const [entry] = JSON.parse((await world.hmm(['ls', '--json'])).stdout)
    expect(entry).toEqual({
      id: ws.id,
      name: 'p',
      state: 'done',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      origin: world.origin,
      tree: ws.tree,
      commits: 0,
      files: 0,
      taken: null,
      exit: 0,
      signal: null,
    })
  })

  it('says broken for a workspace whose tree has gone', async () => {
    world = new World('ls-broken')
    const ws = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    rmSync(ws.tree, {recursive: true, force: true})
    expect((await world.hmm(['ls'])).stdout).toContain(`${ws.id}  -     broken`)
  })

  it('prints help', async () => {
    world = new World('ls-help')
    for (const args of [['--help'], ['ls', '--help'], ['run', '--help'], ['rm', '--help'], ['sandbox', '--help']]) {
      const result = await world.hmm(args)
      expect(result.exitCode, args.join(' ')).toBe(0)
      expect(result.stdout, args.join(' ')).toMatch(/USAGE/)
    }
  })
})
