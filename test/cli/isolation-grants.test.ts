// What a command left in the places the namespaces make its own (its /tmp,
// the tool caches' and agents' layers, all kept with the workspace) must
// not steer the next command's set-up (attacker's review 3, F2 and F3): the
// helper makes $TMPDIR's directories and opens each grant there after those
// places are mounted, so a symbolic link the command left on the way would
// carry a write grant, or a mkdir, to wherever it leads (the home, / as
// root). Each test plants the link in one run and tries to use it in the
// next, run as root and as a plain user.
import {existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {MOVED_ON_MACOS, World} from '../world.js'

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

/** hmm's refusal of a path to write reached through a link the command could have made. */
const refusal = (what: string, link: string, target: string, place: string) =>
  `hmm: ${what} is reached through the symbolic link ${link} (to ${target}) in ${place}, which the sandboxed command could write: a command may have made it; remove the link, or give the path it should lead to\n`
const workspaces = () => (existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(name => /^[0-9a-z]{6}$/.test(name)) : [])
/** A file of the user's that a grant of the home would let the command change. */
const plantRc = () => world.write(join(world.home, '.bashrc'), '# rc\n')
const rcUnchanged = () => expect(readFileSync(join(world.home, '.bashrc'), 'utf8')).toBe('# rc\n')
const appendRc = ['sh', '-c', '(echo pwned >> "$HOME/.bashrc") 2>/dev/null; true']

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

describe('with the namespaces, a link the command left in a path it writes in place', () => {
  it('inside a -w path, which the command writes in place (-w ~/work, write = ["~/work/out"]), is refused', async () => {
    world = new World('ns-nested-grant-link')
    const work = join(world.home, 'work')
    const out = join(work, 'out')
    mkdirSync(out, {recursive: true})
    plantRc()
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'write = ["~/work/out"]\n')
    const plant = await world.hmm(['run', '--rm', '-w', work, 'sh', '-c', 'rm -r ~/work/out && ln -s "$HOME" ~/work/out'])
    expect(plant.exitCode, plant.stderr).toBe(0)
    const next = await world.hmm(['run', '-w', work, ...appendRc])
    expect(next).toMatchObject({exitCode: 1, stderr: refusal(out, out, world.home, work)})
    rcUnchanged()
    expect(workspaces()).toEqual([])
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

/**
 * Opted out of the namespaces (and on macOS) the command writes the caches,
 * /tmp and the -w paths in place: a link it leaves on the way to a path the
 * next command is granted would carry the grant wherever it leads, since
 * hmm resolves the grants' links when it makes the policy. hmm refuses
 * instead, before anything is made, naming the path and the link.
 */
describe('opted out of the namespaces (isolation = "landlock-only"), a link the command left', () => {
  const optOut = (extra = '') => world.write(join(world.home, '.config', 'hmm', 'config.toml'), `isolation = "landlock-only"\n${extra}`)

  it("at the config file's write path in a cache (~/.cache/pip) is refused, and the next command cannot write the home", async () => {
    world = new World('lo-config-grant-link')
    const pip = join(world.home, '.cache', 'pip')
    mkdirSync(pip, {recursive: true})
    plantRc()
    optOut('write = ["~/.cache/pip"]\n')
    const plant = await world.hmm(['run', '--rm', 'sh', '-c', 'rm -r ~/.cache/pip && ln -s "$HOME" ~/.cache/pip'])
    // ~/.cache takes no links nor removed directories from the command any more (95328a1): the link is left as a command
    // of an earlier hmm could leave it.
    expect(plant.exitCode).not.toBe(0)
    expect(lstatSync(pip).isDirectory()).toBe(true)
    rmSync(pip, {recursive: true})
    symlinkSync(world.home, pip)
    const next = await world.hmm(['run', ...appendRc])
    expect(next).toMatchObject({exitCode: 1, stderr: refusal(pip, pip, world.home, join(world.home, '.cache'))})
    rcUnchanged()
    expect(workspaces()).toEqual([])
  })

  it('on the way to a -w path kept for hmm exec (a directory above it in a cache) is refused', async () => {
    world = new World('lo-w-grant-link')
    const pip = join(world.home, '.cache', 'pip')
    const wheels = join(pip, 'wheels')
    mkdirSync(wheels, {recursive: true})
    mkdirSync(join(world.home, 'wheels'))
    optOut()
    const plant = await world.hmm(['run', '-n', 'a', '-w', wheels, 'sh', '-c', 'rm -r ~/.cache/pip && ln -s "$HOME" ~/.cache/pip'])
    // ~/.cache takes no links nor removed directories from the command any more (95328a1): the link is left as a command
    // of an earlier hmm could leave it.
    expect(plant.exitCode).not.toBe(0)
    expect(lstatSync(pip).isDirectory()).toBe(true)
    rmSync(pip, {recursive: true})
    symlinkSync(world.home, pip)
    const next = await world.hmm(['exec', 'a', 'sh', '-c', '(echo pwned > "$HOME/wheels/pwned") 2>/dev/null; true'])
    expect(next).toMatchObject({exitCode: 1, stderr: refusal(wheels, pip, world.home, join(world.home, '.cache'))})
    expect(readdirSync(join(world.home, 'wheels'))).toEqual([])
  })

  it('at its $TMPDIR in the real /tmp is refused, and the next command cannot write where it leads', async () => {
    world = new World('lo-tmpdir-link')
    const tmpdir = inUserTmp()
    mkdirSync(tmpdir)
    const bin = join(world.home, '.local', 'bin')
    mkdirSync(bin, {recursive: true})
    optOut()
    const env = {...world.env, TMPDIR: tmpdir}
    const plant = await world.hmm(['run', '--rm', 'sh', '-c', `rmdir "$TMPDIR" && ln -s '${bin}' "$TMPDIR"`], {env})
    expect(plant.exitCode, plant.stderr).toBe(0)
    const next = await world.hmm(['run', 'sh', '-c', `(echo evil > '${bin}/git') 2>/dev/null; true`], {env})
    expect(next).toMatchObject({exitCode: 1, stderr: refusal(`$TMPDIR ${tmpdir}`, tmpdir, bin, '/tmp')})
    expect(readdirSync(bin)).toEqual([])
    expect(workspaces()).toEqual([])
  })

  it.skipIf(MOVED_ON_MACOS)("is refused by hmm sandbox for macOS's Seatbelt profile too (it takes the grants from the same policy)", async () => {
    world = new World('lo-darwin-grant-link')
    const pip = join(world.home, '.cache', 'pip')
    mkdirSync(join(world.home, '.cache'), {recursive: true})
    symlinkSync(world.home, pip)
    optOut('write = ["~/.cache/pip"]\n')
    const result = await world.hmm(['sandbox', '--platform', 'darwin'])
    expect(result).toMatchObject({exitCode: 1, stderr: refusal(pip, pip, world.home, join(world.home, '.cache'))})
    expect(result.stdout).toBe('')
  })
})
