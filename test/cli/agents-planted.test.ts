// What a command without the agent's profile leaves in a workspace (say a
// package's install script, `hmm run -n w npm install`) does not start
// under the profile in the agent run there later, `hmm exec w claude`, with
// the agent's login bound in (attacker's review 5, F5): a `claude` planted
// in ~/.cargo/bin of the cache layer (rustup puts it first on PATH), a `git`
// the agent's own `git status` would run there, the repository's
// core.fsmonitor; and Claude Code is asked to trust the folder again.
import {chmodSync, existsSync, mkdirSync, rmSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
let bin: string
let cargoBin: string
beforeEach(async () => {
  world = new World('agents-planted')
  await world.gitRepo()
  world.write(join(world.home, '.claude', '.credentials.json'), 'USER-LOGIN\n')
  cargoBin = join(world.home, '.cargo', 'bin')
  mkdirSync(cargoBin, {recursive: true})
  // The user's claude, outside every writable place: says whether it is told it is sandboxed, runs git as Claude Code does at start.
  bin = join(world.root, 'bin')
  agent('claude', 'echo "claude sandboxed=${CLAUDE_CODE_SANDBOXED-unset}"; git status --short >/dev/null 2>&1')
})
afterEach(() => world.dispose())

/** Writes the user's own `name` in bin, running `script`. */
function agent(name: string, script: string): void {
  world.write(join(bin, name), `#!/bin/sh\n${script}\n`)
  chmodSync(join(bin, name), 0o755)
}

/** PATH as rustup's ~/.cargo/env leaves it: ~/.cargo/bin first. */
const withCargo = (path = `${bin}:${world.env.PATH}`) => ({env: {...world.env, PATH: `${cargoBin}:${path}`}})

/** A program a command leaves at `path` that shows the login it can read. */
const planting = (path: string) => `printf '#!/bin/sh\\necho planted; cat ~/.claude/.credentials.json\\n' > ${path} && chmod +x ${path} && echo left`

describe("the agent's program", () => {
  it('is the one on your PATH, not one a command without the profile left in ~/.cargo/bin of the workspace', async () => {
    const run = await world.hmm(['run', '-n', 'w', 'sh', '-c', planting('~/.cargo/bin/claude')], withCargo())
    expect(run.stdout, run.stderr).toBe('left\n')
    const exec = await world.hmm(['exec', 'w', 'claude'], withCargo())
    expect(exec.stdout, exec.stderr).toBe('claude sandboxed=unset\n')
    expect(exec.exitCode).toBe(0)
  })

  it('not installed outside is not found, though a command left one in ~/.cargo/bin of the workspace', async () => {
    await world.hmm(['run', '-n', 'w', 'sh', '-c', planting('~/.cargo/bin/claude')], withCargo())
    const exec = await world.hmm(['exec', 'w', 'claude'], withCargo(world.env.PATH))
    expect(exec).toMatchObject({exitCode: 127, stdout: '', stderr: 'hmm: claude: command not found\n'})
  })

  it('is refused, naming it, before anything is made, where a command could write it: a tool cache, a -w path, through a link', async () => {
    const refusal = (program: string, place: string) =>
      `hmm: claude is ${program}, which the sandboxed command could write (${place}); install claude elsewhere or change PATH\n`
    world.write(join(cargoBin, 'claude'), '#!/bin/sh\necho ran\n')
    chmodSync(join(cargoBin, 'claude'), 0o755)
    const cached = await world.hmm(['run', 'claude'], withCargo())
    expect(cached).toMatchObject({exitCode: 1, stdout: '', stderr: refusal(join(cargoBin, 'claude'), join(world.home, '.cargo'))})
    const tools = join(world.home, 'tools')
    mkdirSync(tools)
    symlinkSync(join(cargoBin, 'claude'), join(tools, 'claude'))
    const linked = await world.hmm(['run', 'claude'], {env: {...world.env, PATH: `${tools}:${world.env.PATH}`}})
    expect(linked).toMatchObject({exitCode: 1, stdout: '', stderr: refusal(join(cargoBin, 'claude'), join(world.home, '.cargo'))})
    expect((await world.hmm(['ls'])).stdout).toBe('')
    // A -w path, given to run or to a later exec (kept for every command of the workspace), here reached through a link on PATH.
    const shared = join(world.home, 'shared')
    mkdirSync(shared)
    world.write(join(shared, 'claude'), '#!/bin/sh\necho ran\n')
    chmodSync(join(shared, 'claude'), 0o755)
    const viaShared = {env: {...world.env, PATH: `${bin}:${world.env.PATH}`}}
    expect((await world.hmm(['run', '-n', 'w', 'true'], viaShared)).exitCode).toBe(0)
    rmSync(join(tools, 'claude'))
    symlinkSync(join(shared, 'claude'), join(tools, 'claude'))
    const exec = await world.hmm(['exec', '-w', shared, 'w', 'claude'], {env: {...world.env, PATH: `${tools}:${world.env.PATH}`}})
    expect(exec).toMatchObject({exitCode: 1, stdout: '', stderr: refusal(join(shared, 'claude'), shared)})
  })
})

describe("the tool caches of a command with an agent's profile", () => {
  it('are layers of their own: it sees nothing a command without the profile left there (a git first on PATH), nor the other way round', async () => {
    agent('claude', 'git status --short >/dev/null; ls ~/.cache; touch ~/.cache/by-agent')
    const marker = join(world.root, 'planted-git-ran')
    const plant = `printf '#!/bin/sh\\necho ran >> "${marker}"\\nexec /usr/bin/git "$@"\\n' > ~/.cargo/bin/git && chmod +x ~/.cargo/bin/git && touch ~/.cache/by-plain && echo left`
    const run = await world.hmm(['run', '-n', 'w', 'sh', '-c', plant], withCargo())
    expect(run.stdout, run.stderr).toBe('left\n')
    const first = await world.hmm(['exec', 'w', 'claude'], withCargo())
    expect(first.stdout, first.stderr).toBe('')
    expect(existsSync(marker)).toBe(false)
    // The agent's own writes are there for it again; the plain command's for plain commands, the agent's not.
    expect((await world.hmm(['exec', 'w', 'claude'], withCargo())).stdout).toBe('by-agent\n')
    expect((await world.hmm(['exec', 'w', 'sh', '-c', 'ls ~/.cache'], withCargo())).stdout).toBe('by-plain\n')
  })
})

describe('Claude Code in a workspace', () => {
  it('is told it is sandboxed (no question to trust the folder) only while every command run there had its profile', async () => {
    const first = await world.hmm(['run', '-n', 'w', 'claude'], {env: {...world.env, PATH: `${bin}:${world.env.PATH}`}})
    expect(first.stdout, first.stderr).toBe('claude sandboxed=1\n')
    const env = {env: {...world.env, PATH: `${bin}:${world.env.PATH}`}}
    expect((await world.hmm(['exec', 'w', 'claude'], env)).stdout).toBe('claude sandboxed=1\n')
    // Nor is any other command told so.
    expect((await world.hmm(['exec', 'w', 'sh', '-c', 'echo "sh sandboxed=${CLAUDE_CODE_SANDBOXED-unset}"'], env)).stdout).toBe('sh sandboxed=unset\n')
    expect((await world.hmm(['exec', 'w', 'claude'], env)).stdout).toBe('claude sandboxed=unset\n')
    // A workspace made by another command: from its first claude on.
    const plain = await world.hmm(['run', '-n', 'v', 'true'], env)
    expect(plain.exitCode).toBe(0)
    expect((await world.hmm(['exec', 'v', 'claude'], env)).stdout).toBe('claude sandboxed=unset\n')
    expect(workspaceLine(plain.stderr).name).toBe('v')
  })

  it("runs no core.fsmonitor a command without its profile set in the workspace's repository, and keeps your own git settings", async () => {
    const plant = [
      'printf \'#!/bin/sh\\ntouch "$(git rev-parse --show-toplevel)/fsmonitor-ran"\\n\' > .git/mon && chmod +x .git/mon',
      `git config core.fsmonitor "'$PWD/.git/mon'"`,
      // The planted monitor works: the plain command's own git status runs it.
      'git status >/dev/null 2>&1; test -e fsmonitor-ran && echo works && rm fsmonitor-ran',
    ].join(' && ')
    const env = {...world.env, PATH: `${bin}:${world.env.PATH}`, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'From Env'}
    const run = await world.hmm(['run', '-n', 'w', 'sh', '-c', plant], {env})
    expect(run.stdout, run.stderr).toBe('works\n')
    agent('claude', 'git status --short >/dev/null 2>&1; git config user.name; git config core.fsmonitor; sh -c "git status >/dev/null 2>&1"')
    const exec = await world.hmm(['exec', 'w', 'claude'], {env})
    expect(exec.stdout, exec.stderr).toBe('From Env\nfalse\n')
    expect(existsSync(join(workspaceLine(run.stderr).tree, 'fsmonitor-ran'))).toBe(false)
  })
})
