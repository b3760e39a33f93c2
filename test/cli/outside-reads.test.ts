// What hmm and the git it runs outside the sandbox read never lies where the
// sandboxed command writes in place: the origin's repository, git's own
// configuration and what it names, hmm's config file (SPEC "Sandbox",
// Writing; attacker's review 9, F1 and F9). hmm run and hmm exec refuse,
// naming the path, before anything starts.
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
beforeEach(async () => {
  world = new World('outside-reads')
  await world.gitRepo()
})
afterEach(() => world.dispose())

/** A command that leaves a mark if it runs at all. */
function marking(): {marker: string; command: string[]} {
  const marker = join(world.root, 'command-ran')
  return {marker, command: ['sh', '-c', `touch '${marker}'`]}
}

const GIT_WHY = 'git outside the sandbox would run what it put there'

describe("the origin's repository", () => {
  it('is refused where a -w path holds it (-w ~/src): the command would set the pager hmm diff runs', async () => {
    const src = join(world.home, 'src')
    const {marker, command} = marking()
    const run = await world.hmm(['run', '-w', src, ...command])
    expect(run.stderr).toBe(
      `hmm: the repository of ${world.origin} is ${world.origin}/.git, which the sandboxed command could write (${src}); ${GIT_WHY}: do not let it write ${src}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })

  it('is refused for hmm exec too, where a -w path given now holds it', async () => {
    expect((await world.hmm(['run', '-n', 'w', 'true'])).exitCode).toBe(0)
    const {marker, command} = marking()
    const exec = await world.hmm(['exec', '-w', world.origin, 'w', ...command])
    expect(exec.stderr).toBe(
      `hmm: the repository of ${world.origin} is ${world.origin}/.git, which the sandboxed command could write (${world.origin}); ${GIT_WHY}: do not let it write ${world.origin}, or move it\n`,
    )
    expect(exec.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it("of a linked worktree is refused where a -w path holds the repository it shares (its common directory's config)", async () => {
    const main = world.origin
    const linked = join(world.home, 'wt', 'proj')
    await world.git(['worktree', 'add', '-q', '-b', 'side', linked])
    const {marker, command} = marking()
    const run = await world.hmm(['run', '-w', main, ...command], {cwd: linked})
    expect(run.stderr).toBe(
      `hmm: the repository of ${linked} is ${main}/.git/worktrees/proj, which the sandboxed command could write (${main}); ${GIT_WHY}: do not let it write ${main}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it('is refused without any -w under isolation = "landlock-only" where it lies in a place every command writes (a tool cache); with the namespaces it runs', async () => {
    const cached = join(world.home, '.cache', 'proj')
    mkdirSync(cached, {recursive: true})
    await world.git(['init', '-q'], cached)
    await world.git(['commit', '-q', '--allow-empty', '-m', 'first'], cached)
    expect((await world.hmm(['run', '--rm', 'true'], {cwd: cached})).exitCode).toBe(0)
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const {marker, command} = marking()
    const run = await world.hmm(['run', ...command], {cwd: cached})
    const cache = join(world.home, '.cache')
    expect(run.stderr).toBe(
      `hmm: the repository of ${cached} is ${cached}/.git, which the sandboxed command could write (${cache}); ${GIT_WHY}: do not let it write ${cache}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })
})

describe("git's configuration", () => {
  it('is refused where a -w path holds a file it includes, made or not yet', async () => {
    const shared = join(world.home, 'shared')
    mkdirSync(shared)
    world.write(join(world.home, '.gitconfig'), `${readFileSync(join(world.home, '.gitconfig'), 'utf8')}[include]\n\tpath = ~/shared/git.inc\n`)
    const {marker, command} = marking()
    const run = await world.hmm(['run', '-w', shared, ...command])
    expect(run.stderr).toBe(
      `hmm: git's configuration is ${shared}/git.inc, which the sandboxed command could write (${shared}); ${GIT_WHY}: do not let it write ${shared}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it("is refused where a -w path holds the user's git directory in ~/.config", async () => {
    const gitDir = join(world.home, '.config', 'git')
    mkdirSync(gitDir, {recursive: true})
    const {marker, command} = marking()
    const run = await world.hmm(['run', '-w', gitDir, ...command])
    expect(run.stderr).toBe(
      `hmm: git's configuration is ${gitDir}, which the sandboxed command could write (${gitDir}); ${GIT_WHY}: do not let it write ${gitDir}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })
})

describe("hmm's config file", () => {
  it('is refused where a -w path holds it (-w ~/.config), made or not yet: the command would unhide ~/.ssh for every later run', async () => {
    world.plantSecrets()
    const config = join(world.home, '.config')
    mkdirSync(config, {recursive: true})
    const script = `mkdir -p '${config}/hmm' && printf 'unhide = ["~/.ssh"]\\n' >> '${config}/hmm/config.toml'`
    const run = await world.hmm(['run', '--rm', '-w', config, 'sh', '-c', script])
    expect(run.stderr).toBe(
      `hmm: hmm's config file is ${config}/hmm/config.toml, which the sandboxed command could write (${config}); what it put there would apply to every later run: do not let it write ${config}, or move it\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(join(config, 'hmm', 'config.toml'))).toBe(false)
    expect((await world.hmm(['run', '--rm', 'cat', join(world.home, '.ssh', 'id_rsa')])).stdout).not.toContain('PRIVATE KEY')
  })
})
