// What a command left in the places the namespaces make its own (its /tmp,
// the tool caches' and agents' layers, all kept with the workspace) must
// not steer the next command's set-up (attacker's review 3, F2 and F3): the
// helper makes $TMPDIR's directories and opens each grant there after those
// places are mounted, so a symbolic link the command left on the way would
// carry a write grant, or a mkdir, to wherever it leads (the home, / as
// root). Each test plants the link in one run and tries to use it in the
// next, run as root and as a plain user.
import {existsSync, mkdirSync, readdirSync, rmSync} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
const made: string[] = []
afterEach(() => {
  world?.dispose()
  for (const dir of made.splice(0)) rmSync(dir, {recursive: true, force: true})
})

/** A name in the user's /tmp for one test (the user's $TMPDIR, or a directory shared with -w), removed after it. */
function inUserTmp(): string {
  const dir = join('/tmp', `hmm-grants-${randomBytes(4).toString('hex')}`)
  made.push(dir)
  return dir
}

describe('a link the command left in its own places', () => {
  it('at its $TMPDIR under /tmp (pam_tmpdir, TMPDIR=/tmp/me) does not let the next command write the home', async () => {
    world = new World('tmpdir-link')
    const tmpdir = inUserTmp()
    mkdirSync(tmpdir)
    const env = {...world.env, TMPDIR: tmpdir}
    const plant = await world.hmm(['run', '-n', 'a', 'sh', '-c', 'echo mine > "$TMPDIR/t" && cat "$TMPDIR/t" && rm -r "$TMPDIR" && ln -s "$HOME" "$TMPDIR"'], {
      env,
    })
    expect(plant.exitCode, plant.stderr).toBe(0)
    expect(plant.stdout).toBe('mine\n')
    const next = await world.hmm(['exec', 'a', 'sh', '-c', '(echo pwned > "$HOME/pwned") 2>/dev/null; true'], {env})
    expect(next.exitCode, next.stderr).toBe(0)
    expect(existsSync(join(world.home, 'pwned'))).toBe(false)
    // The user's own $TMPDIR was never the command's.
    expect(readdirSync(tmpdir)).toEqual([])
  })

  it('on the way to its $TMPDIR (two levels under /tmp) makes no directory outside, and gives no write there', async () => {
    world = new World('tmpdir-mkdir')
    const top = inUserTmp()
    const tmpdir = join(top, 'u')
    mkdirSync(tmpdir, {recursive: true})
    const target = join(world.home, 'target')
    mkdirSync(target)
    const env = {...world.env, TMPDIR: tmpdir}
    const plant = await world.hmm(
      ['run', '-n', 'a', 'sh', '-c', `echo mine > "$TMPDIR/t" && cat "$TMPDIR/t" && rm -r '${top}' && ln -s '${target}' '${top}'`],
      {
        env,
      },
    )
    expect(plant.exitCode, plant.stderr).toBe(0)
    expect(plant.stdout).toBe('mine\n')
    const next = await world.hmm(['exec', 'a', 'sh', '-c', `(echo pwned > '${target}/pwned') 2>/dev/null; true`], {env})
    expect(next.exitCode, next.stderr).toBe(0)
    expect(readdirSync(target)).toEqual([])
  })

  it('at a -w path inside a tool cache (-w ~/.cache/pip, kept for hmm exec) does not let the next command write the home', async () => {
    world = new World('cache-grant-link')
    const pip = join(world.home, '.cache', 'pip')
    mkdirSync(pip, {recursive: true})
    const plant = await world.hmm(['run', '-n', 'a', '-w', pip, 'sh', '-c', 'echo mine > ~/.cache/pip/t && rm -r ~/.cache/pip && ln -s "$HOME" ~/.cache/pip'])
    expect(plant.exitCode, plant.stderr).toBe(0)
    const next = await world.hmm(['exec', 'a', 'sh', '-c', '(echo pwned > "$HOME/pwned") 2>/dev/null; true'])
    expect(next.exitCode, next.stderr).toBe(0)
    expect(existsSync(join(world.home, 'pwned'))).toBe(false)
    // The user's cache is as it was: the command wrote its own layer.
    expect(readdirSync(pip)).toEqual([])
  })
})

describe('-w under /tmp', () => {
  it("is refused where the command's /tmp is its own: the user's directory there cannot be shared", async () => {
    world = new World('w-under-tmp')
    const shared = inUserTmp()
    mkdirSync(shared)
    const result = await world.hmm(['run', '-w', shared, 'true'])
    expect(result).toMatchObject({
      exitCode: 1,
      stderr: `hmm: ${shared} cannot be shared: the sandboxed command has a /tmp of its own; share a directory outside it\n`,
    })
    expect(existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(name => /^[0-9a-z]{6}$/.test(name)) : []).toEqual([])
  })
})
