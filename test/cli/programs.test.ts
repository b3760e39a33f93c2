// Programs hmm runs outside the sandbox are found once, and never where the
// sandboxed command could have written them (SPEC "Sandbox", Writing;
// issue 10 item 4).
import {chmodSync, existsSync, mkdirSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {BIN, workspaceLine, World} from '../world.js'

let world: World
beforeEach(async () => {
  world = new World('programs')
  await world.gitRepo()
})
afterEach(() => world.dispose())

/** A git that leaves a mark when it runs, then does what git does. */
function fakeGit(path: string, marker: string): string {
  world.write(path, `#!/bin/sh\necho ran >> '${marker}'\nexec /usr/bin/git "$@"\n`)
  chmodSync(path, 0o755)
  return path
}

describe('a program hmm runs outside the sandbox', () => {
  it('is refused, naming it, where the command could write it (~/.cargo/bin/git first on PATH)', async () => {
    const cargoBin = join(world.home, '.cargo', 'bin')
    const marker = join(world.root, 'ran-outside')
    const git = fakeGit(join(cargoBin, 'git'), marker)
    const env = {...world.env, PATH: `${cargoBin}:${world.env.PATH}`}
    const run = await world.hmm(['run', 'true'], {env})
    expect(run.stderr).toBe(
      `hmm: git is ${git}, which the sandboxed command could write (${join(world.home, '.cargo')}); install git elsewhere or change PATH\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it('is refused before it ever runs where only a command with the namespaces could write it (~/go/pkg/mod, a layer)', async () => {
    const modBin = join(world.home, 'go', 'pkg', 'mod', 'bin')
    const marker = join(world.root, 'ran-outside')
    const git = fakeGit(join(modBin, 'git'), marker)
    const run = await world.hmm(['run', 'true'], {env: {...world.env, PATH: `${modBin}:${world.env.PATH}`}})
    expect(run.stderr).toBe(
      `hmm: git is ${git}, which the sandboxed command could write (${join(world.home, 'go', 'pkg', 'mod')}); install git elsewhere or change PATH\n`,
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it('written by the command into ~/.cargo/bin is not run by the next hmm diff', async () => {
    const cargoBin = join(world.home, '.cargo', 'bin')
    mkdirSync(cargoBin, {recursive: true})
    const marker = join(world.root, 'ran-outside')
    const env = {...world.env, PATH: `${cargoBin}:${world.env.PATH}`}
    const script = `(printf '#!/bin/sh\\necho ran >> "${marker}"\\nexec /usr/bin/git "$@"\\n' > '${cargoBin}/git' && chmod +x '${cargoBin}/git'); echo change >> README.md`
    const run = await world.hmm(['run', 'sh', '-c', script], {env})
    expect(run.exitCode).toBe(0)
    const diff = await world.hmm(['diff'], {env})
    expect(existsSync(marker)).toBe(false)
    // Either the write was refused or stayed in the workspace's cache layer (the diff works), or hmm refused the git it would have run.
    if (diff.exitCode !== 0)
      expect(diff.stderr).toBe(
        `hmm: git is ${cargoBin}/git, which the sandboxed command could write (${join(world.home, '.cargo')}); install git elsewhere or change PATH\n`,
      )
    else expect(diff.stdout).toContain('+change')
  })

  it("written by a workspace's command into its tree is not run by hmm diff when PATH leads into the tree (direnv, a venv)", async () => {
    const marker = join(world.root, 'ran-outside')
    const run = await world.hmm([
      'run',
      'sh',
      '-c',
      `mkdir -p bin && printf '#!/bin/sh\\necho ran >> ${marker}\\nexec /usr/bin/git "$@"\\n' > bin/git && chmod +x bin/git`,
    ])
    expect(run.exitCode, run.stderr).toBe(0)
    const {id, tree} = workspaceLine(run.stderr)
    const env = {...world.env, PATH: `${join(tree, 'bin')}:${world.env.PATH}`}
    const diff = await world.hmm(['diff', id], {env})
    expect(diff.stderr).toBe(
      `hmm: git is ${join(tree, 'bin', 'git')}, which the sandboxed command could write (${world.dataDir}); install git elsewhere or change PATH\n`,
    )
    expect(diff.exitCode).toBe(1)
    expect(existsSync(marker)).toBe(false)
  })

  it('is refused when reached through a link the command could write (-w ~/.local, hmm linked in ~/.local/bin)', async () => {
    const localBin = join(world.home, '.local', 'bin')
    mkdirSync(localBin, {recursive: true})
    symlinkSync(BIN, join(localBin, 'hmm'))
    const env = {...world.env, PATH: `${localBin}:${world.env.PATH}`}
    const run = await world.hmm(['run', '-w', join(world.home, '.local'), 'true'], {env})
    expect(run.stderr).toBe(
      `hmm: hmm is reached through ${localBin}/hmm, which the sandboxed command could write (${join(world.home, '.local')}); install hmm elsewhere or change PATH\n`,
    )
    expect(run.exitCode).toBe(1)
    // Without -w ~/.local it runs.
    expect((await world.hmm(['run', '--rm', 'true'], {env})).exitCode).toBe(0)
  })

  it('is refused when a -w directory comes before it on PATH: a git the command left there would run at the next hmm diff', async () => {
    const bin = join(world.home, 'bin')
    mkdirSync(bin)
    const marker = join(world.root, 'ran-outside')
    const env = {...world.env, PATH: `${bin}:${world.env.PATH}`}
    const script = `printf '#!/bin/sh\\necho ran >> "${marker}"\\nexec /usr/bin/git "$@"\\n' > '${bin}/git' && chmod +x '${bin}/git'; echo change >> README.md`
    const run = await world.hmm(['run', '-w', bin, 'sh', '-c', script], {env})
    await world.hmm(['diff'], {env})
    expect(existsSync(marker)).toBe(false)
    expect(run.stderr).toMatch(
      new RegExp(
        `^hmm: git is looked for in ${bin} before /\\S+/git, which the sandboxed command could write \\(${bin}\\); a git it left there would run outside: take ${bin} off PATH or do not make ${bin} writable\\n$`,
      ),
    )
    expect(run.exitCode).toBe(1)
    // The same for a program hmm runs that is not installed (gh, here): the command could leave one.
    if (!existsSync('/usr/bin/gh') && !existsSync('/bin/gh')) {
      const late = await world.hmm(['run', '-w', bin, 'true'], {env: {...world.env, PATH: `/usr/bin:/bin:${bin}`}})
      expect(late.stderr).toMatch(new RegExp(`^hmm: gh is looked for in ${bin} \\(gh is not installed\\)`))
    }
  })

  it('is refused under landlock-only when a cache, written in place there, comes before it on PATH; a read-only part of one is not', async () => {
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    // rebar3's documented install puts ~/.cache/rebar3/bin on PATH.
    const bin = join(world.home, '.cache', 'rebar3', 'bin')
    mkdirSync(bin, {recursive: true})
    const planted = join(bin, 'git')
    const env = {...world.env, PATH: `${bin}:${world.env.PATH}`}
    const script = `printf '#!/bin/sh\\nexec /usr/bin/git "$@"\\n' > '${planted}' && chmod +x '${planted}'`
    const run = await world.hmm(['run', '--rm', 'sh', '-c', script], {env})
    expect(run.stderr).toMatch(
      new RegExp(
        `^hmm: git is looked for in ${bin} before /\\S+/git, which the sandboxed command could write \\(${join(world.home, '.cache')}, written in place without the namespaces\\); a git it left there would run outside: take ${bin} off PATH\\n$`,
      ),
    )
    expect(run.exitCode).toBe(1)
    expect(existsSync(planted)).toBe(false)
    // The command may not write ~/.cargo/bin there (policy.ts CACHE_PROGRAMS): rustup's place on PATH is no refusal.
    const cargoBin = join(world.home, '.cargo', 'bin')
    mkdirSync(cargoBin, {recursive: true})
    const cargo = await world.hmm(['run', '--rm', 'true'], {env: {...world.env, PATH: `${cargoBin}:${world.env.PATH}`}})
    expect(cargo.exitCode, cargo.stderr).toBe(0)
  })
})

describe("oclif's user plugins", () => {
  // Attacker's review 8, F11: oclif loads the plugins listed in <its data directory>/package.json, which is
  // ~/.local/share/hmm: hmm's own data directory by default, an ordinary directory once HMM_HOME is set
  // elsewhere (a -w ~/.local/share lets the command write it), and runs their init hook in every hmm command.
  it('are never loaded: a plugin planted in ~/.local/share/hmm runs nothing in hmm', async () => {
    const planted = join(world.home, '.local', 'share', 'hmm')
    const mark = join(world.home, 'plugin-ran')
    world.write(
      join(planted, 'package.json'),
      '{"private":true,"oclif":{"schema":1,"plugins":[{"name":"evil","type":"user","tag":"latest"},{"name":"linked","type":"link","root":"./node_modules/evil"}]}}\n',
    )
    world.write(join(planted, 'node_modules', 'evil', 'package.json'), '{"name":"evil","version":"1.0.0","oclif":{"hooks":{"init":"./hook.js"}}}\n')
    world.write(join(planted, 'node_modules', 'evil', 'hook.js'), `module.exports = async () => require('fs').writeFileSync(${JSON.stringify(mark)}, 'ran')\n`)
    const env = {...world.env, HMM_HOME: join(world.root, 'hmm-data')}
    for (const args of [['run', '--rm', 'true'], ['sandbox'], ['help']]) {
      const result = await world.hmm(args, {env})
      expect(result.exitCode, result.stderr).toBe(0)
    }
    expect(existsSync(mark)).toBe(false)
  })
})
