// `hmm exec`, line by line of SPEC: a command again in an existing workspace,
// under the same sandbox as `hmm run`, several at once.
import {existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {HELPER, Started, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

function lines(stderr: string): string[] {
  return stderr.split('\n').filter(line => line.startsWith('hmm: workspace '))
}

async function stateOf(id: string): Promise<string> {
  const entries = JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Array<{id: string; state: string}>
  return entries.find(entry => entry.id === id)?.state ?? 'missing'
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`waited in vain for ${what}`)
}

/** Starts hmm with a command that prints `ready` and waits for the marker file; resolves once it is ready. */
async function startWaiting(args: string[], marker: string): Promise<Started> {
  const started = world.start([...args, 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`])
  await started.line('ready')
  return started
}

describe('hmm exec', () => {
  it("runs a command again in the workspace's tree, prints the workspace line twice and exits with its status", async () => {
    world = new World('exec-again')
    const made = await world.hmm(['run', '-n', 'parser', 'sh', '-c', 'echo first > made-here'])
    const ws = workspaceLine(made.stderr)
    const result = await world.hmm(['exec', 'parser', 'sh', '-c', 'cat made-here; pwd; exit 5'])
    expect(result.stdout).toBe(`first\n${ws.tree}\n`)
    expect(result.exitCode).toBe(5)
    expect(lines(result.stderr)).toHaveLength(2)
    expect(workspaceLine(result.stderr)).toEqual(ws)
    // By ID too, and without a command it runs $SHELL.
    const shell = await world.hmm(['exec', ws.id], {input: 'echo "in $0"; exit 4'})
    expect(shell.stdout).toBe('in /bin/sh\n')
    expect(shell.exitCode).toBe(4)
  })

  it("passes everything from the command on to the command, hmm's flags included", async () => {
    world = new World('exec-argv')
    await world.hmm(['run', '-n', 'p', 'true'])
    const result = await world.hmm(['exec', 'p', 'printf', '%s\\n', '-w', 'x', '--rm'])
    expect(result.stdout).toBe('-w\nx\n--rm\n')
    expect(result.exitCode).toBe(0)
  })

  it("keeps the run's -w paths, adds the new ones for good, and confines the rest", async () => {
    world = new World('exec-write')
    const first = join(world.home, 'first')
    const second = join(world.home, 'second')
    const other = join(world.home, 'other')
    for (const dir of [first, second, other]) mkdirSync(dir)
    await world.hmm(['run', '-n', 'p', '-w', first, 'true'])
    const confined = await world.hmm(['exec', 'p', 'sh', '-c', `echo a > '${first}/a'; echo b > '${other}/b'`])
    expect(confined.exitCode).not.toBe(0)
    expect(readFileSync(join(first, 'a'), 'utf8')).toBe('a\n')
    expect(existsSync(join(other, 'b'))).toBe(false)
    expect((await world.hmm(['exec', '-w', second, 'p', 'sh', '-c', `echo b > '${second}/b'`])).exitCode).toBe(0)
    const later = await world.hmm(['exec', 'p', 'sh', '-c', `echo c > '${second}/c' && echo d > '${first}/d'`])
    expect(later.exitCode, later.stderr).toBe(0)
    expect(readFileSync(join(second, 'c'), 'utf8')).toBe('c\n')
  })

  it('runs several commands in one workspace at once, running while any of them lives', async () => {
    world = new World('exec-several')
    const runMarker = join(world.root, 'run-done')
    const execMarker = join(world.root, 'exec-done')
    const running = await startWaiting(['run', '-n', 'p'], runMarker)
    const {id} = workspaceLine(running.stderr)
    // A second command while the first runs does not wait for it.
    const second = await world.hmm(['exec', 'p', 'sh', '-c', 'echo second'])
    expect(second).toMatchObject({exitCode: 0, stdout: 'second\n'})
    const execing = await startWaiting(['exec', 'p'], execMarker)
    await world.sh(`touch '${runMarker}'`)
    expect((await running.result()).exitCode).toBe(0)
    expect(await stateOf(id)).toBe('running')
    await world.sh(`touch '${execMarker}'`)
    expect((await execing.result()).exitCode).toBe(0)
    await until('the workspace to be done', async () => (await stateOf(id)) === 'done')
  })

  it('runs commands at once that write the same cache each through layers of their own, and the next one sees what both wrote', async () => {
    world = new World('exec-cache-layers')
    mkdirSync(join(world.home, '.cache'))
    const cache = join(world.home, '.cache')
    const secondDone = join(world.root, 'second-done')
    // The overlay on ~/.cache as the command's own mount table shows it (the kernel's word on its upper and work dirs).
    // mountinfo writes a space in a path as \040; ENVIRON, unlike awk -v, takes the backslash as it is.
    const overlay = `M="$(printf %s "$HOME/.cache" | sed 's/ /\\\\040/g')" awk '$5 == ENVIRON["M"] {sub(/.* - /, ""); print "mount " $0}' /proc/self/mountinfo`
    const first = world.start([
      'run',
      '-n',
      'p',
      'sh',
      '-c',
      `echo a > ~/.cache/a && ${overlay} && echo ready; while [ ! -e '${secondDone}' ]; do sleep 0.05; done; echo a-later > ~/.cache/a-later`,
    ])
    await first.line('ready')
    const second = await world.hmm(['exec', 'p', 'sh', '-c', `echo b > ~/.cache/b && ${overlay}`])
    expect(second.exitCode, second.stderr).toBe(0)
    await world.sh(`touch '${secondDone}'`)
    expect((await first.result()).exitCode).toBe(0)
    // Two live overlay mounts sharing an upper or a work directory: undefined, says the kernel.
    const dirs = (stdout: string) => {
      const options = stdout.split('\n').find(line => line.startsWith('mount ')) ?? ''
      return {upper: /upperdir=([^,]+)/.exec(options)?.[1], work: /workdir=([^,]+)/.exec(options)?.[1]}
    }
    const [a, b] = [dirs(first.stdout), dirs(second.stdout)]
    expect([a.upper, a.work, b.upper, b.work].every(Boolean), `${first.stdout}${second.stdout}`).toBe(true)
    expect(a.upper).not.toBe(b.upper)
    expect(a.work).not.toBe(b.work)
    // Kept for the next command, both, the first one's writes after the second had ended too; the user's cache unchanged.
    const next = await world.hmm(['exec', 'p', 'cat', join(cache, 'a'), join(cache, 'b'), join(cache, 'a-later')])
    expect(next).toMatchObject({exitCode: 0, stdout: 'a\nb\na-later\n'})
    expect(existsSync(join(cache, 'a'))).toBe(false)
  })

  // Attacker's review 24, F1: the command put a link where a directory on the way to the user's place was; followed,
  // /proc/self/cwd/.. led to the user's real directory beneath the mask over the origin, live.
  it("starts at the top of the tree, saying why, where the command made a directory on the way to the user's place a link: never in the real origin", async () => {
    world = new World('exec-cwd-link')
    await world.gitRepo()
    world.file('a/b/f.txt', 'in the origin\n')
    const made = await world.hmm(['run', '-n', 'p', 'sh', '-c', 'rm -rf a && ln -s /proc/self/cwd/.. a'])
    expect(made.exitCode, made.stderr).toBe(0)
    const ws = workspaceLine(made.stderr)
    world.file('a/b/new-work.txt', "the user's work since\n")
    const inside = await world.hmm(['exec', 'p', 'sh', '-c', 'pwd; readlink /proc/self/cwd; ls -d README.md; ls f.txt new-work.txt'], {
      cwd: join(world.origin, 'a', 'b'),
    })
    expect(inside.stdout).toBe(`${ws.tree}\n${ws.tree}\nREADME.md\n`)
    expect(inside.exitCode).not.toBe(0)
    expect(inside.stderr).toContain(`hmm: no directory a/b in workspace ${ws.id} (p), a is a link there; the command starts at the top of its tree\n`)
  })

  it("keeps no process of the sandbox in the user's directory: the helper hmm starts, its init and the command's start hold none outside the tree", async () => {
    world = new World('exec-cwd-helpers')
    await world.gitRepo()
    world.file('a/b/f.txt', 'in the origin\n')
    await world.hmm(['run', '-n', 'p', 'true'])
    const marker = join(world.root, 'done')
    const running = world.start(['exec', 'p', 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`], {
      cwd: join(world.origin, 'a', 'b'),
    })
    await running.line('ready')
    const ws = workspaceLine(running.stderr)
    // The workspace's helpers, known by their mode and lock, which their command lines keep (exec-args.c blank_arguments).
    const lock = join(world.dataDir, ws.id, 'lock')
    const helpers = readdirSync('/proc')
      .filter(name => /^\d+$/.test(name))
      .filter(pid => {
        try {
          const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
          return argv[0] === HELPER && argv[1] === 'exec' && argv[2] === '--lock' && argv[3] === lock
        } catch {
          return false
        }
      })
    // A plain user may read the init's command line, not where it stands (another user namespace's): left out.
    const cwds = helpers.flatMap(pid => {
      try {
        return [readlinkSync(`/proc/${pid}/cwd`)]
      } catch {
        return []
      }
    })
    await world.sh(`touch '${marker}'`)
    expect((await running.result()).exitCode).toBe(0)
    // The waiter and the init (as root, readable from outside; a plain user sees the waiter alone).
    expect(cwds.length).toBeGreaterThanOrEqual(process.getuid?.() === 0 ? 2 : 1)
    expect(cwds).toEqual(cwds.map(() => '/'))
  })

  it('refuses a broken workspace, an unknown one and a missing -w path, with one line', async () => {
    world = new World('exec-errors')
    const made = await world.hmm(['run', '-n', 'p', 'true'])
    const ws = workspaceLine(made.stderr)
    expect(await world.hmm(['exec', 'nope', 'true'])).toMatchObject({exitCode: 1, stderr: 'hmm: no workspace nope\n', stdout: ''})
    expect(await world.hmm(['exec'])).toMatchObject({exitCode: 1, stderr: 'hmm: exec needs the workspace to run in\n'})
    const missing = join(world.home, 'missing')
    expect(await world.hmm(['exec', '-w', missing, 'p', 'true'])).toMatchObject({exitCode: 1, stderr: `hmm: ${missing} does not exist\n`})
    rmSync(ws.tree, {recursive: true})
    expect(await world.hmm(['exec', 'p', 'true'])).toMatchObject({
      exitCode: 1,
      stderr: `hmm: workspace ${ws.id} (p) is broken (hmm rm removes it)\n`,
      stdout: '',
    })
  })
})
