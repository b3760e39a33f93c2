// hmm's data directory is never the command's to write (attacker's review
// 10, issue 23 item 2): a -w at or inside it is refused before anything is
// made, and should its files be changed all the same (by a bug of another
// layer), hmm's own git does not run what the private repository's config
// names, and hmm stop finds the workspace's processes by its PID
// namespace's init, not by the lock file alone.
import {existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const workspaces = () => (existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(name => /^[0-9a-z]{6}$/.test(name)) : [])

describe('a grant of the data directory', () => {
  it('is refused at the data directory, named as given, and nothing is made', async () => {
    world = new World('data-grant')
    await world.gitRepo()
    mkdirSync(world.dataDir, {recursive: true})
    const result = await world.hmm(['run', '-w', world.dataDir, 'true'])
    expect(result.stderr).toBe(`hmm: -w ${world.dataDir} is hmm's data directory, which the command may never write\n`)
    expect(result.exitCode).toBe(1)
    expect(workspaces()).toEqual([])
  })

  it('is refused at $HMM_HOME and inside it, and through a link to it', async () => {
    world = new World('data-grant-home')
    await world.gitRepo()
    const data = join(world.root, 'hmm-data')
    const env = {...world.env, HMM_HOME: data}
    const first = await world.hmm(['run', '-n', 'a', 'true'], {env})
    expect(first.exitCode, first.stderr).toBe(0)
    const {id} = workspaceLine(first.stderr)
    const atHome = await world.hmm(['run', '-w', data, 'true'], {env})
    expect(atHome.stderr).toBe(`hmm: -w ${data} is hmm's data directory, which the command may never write\n`)
    const inside = join(data, id, 'git')
    const within = await world.hmm(['exec', '-w', inside, 'a', 'true'], {env})
    expect(within.stderr).toBe(`hmm: -w ${inside} is inside hmm's data directory, which the command may never write\n`)
    expect(within.exitCode).toBe(1)
    const link = join(world.root, 'to-data')
    await world.sh(`ln -s '${data}' '${link}'`)
    const linked = await world.hmm(['run', '-w', link, 'true'], {env})
    expect(linked.stderr).toBe(`hmm: -w ${link} is hmm's data directory, which the command may never write\n`)
    // The one made first is the only one.
    expect(readdirSync(data).filter(name => /^[0-9a-z]{6}$/.test(name))).toEqual([id])
  })

  it("is refused as the config file's write, and hmm sandbox refuses it too", async () => {
    world = new World('data-grant-config')
    await world.gitRepo()
    mkdirSync(world.dataDir, {recursive: true})
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), `write = ["~/.local/share/hmm"]\n`)
    const run = await world.hmm(['run', 'true'])
    expect(run.stderr).toBe(`hmm: write ${world.dataDir} in the config file is hmm's data directory, which the command may never write\n`)
    expect(run.exitCode).toBe(1)
    const shown = await world.hmm(['sandbox'])
    expect(shown.stderr).toBe(`hmm: write ${world.dataDir} in the config file is hmm's data directory, which the command may never write\n`)
    expect(shown.exitCode).toBe(1)
    expect(workspaces()).toEqual([])
  })
})

describe('should the data directory be written all the same', () => {
  it("hmm's git does not run what a changed private repository's config names", async () => {
    world = new World('data-config')
    await world.gitRepo()
    const made = await world.hmm(['run', '-n', 'a', 'sh', '-c', 'git commit -qam work'])
    expect(made.exitCode, made.stderr).toBe(0)
    const {id} = workspaceLine(made.stderr)
    const ran = join(world.root, 'ran')
    const config = join(world.dataDir, id, 'git', 'config')
    const before = readFileSync(config, 'utf8')
    const run = `"touch '${ran}'"`
    // What a command with a grant of the data directory appended (the review's (a)), and the other ways in.
    for (const planted of [
      `[core]\n\talternateRefsCommand = ${run}\n`,
      `[core]\n\tpager = ${run}\n\tsshCommand = ${run}\n[diff]\n\texternal = ${run}\n`,
      `[include]\n\tpath = ${join(world.root, 'more')}\n`,
      `[core]\n\tfsmonitor = ${run}\n`,
    ]) {
      writeFileSync(config, before + planted)
      // A new commit: hmm fetches it into the private repository when the command ends, and again for log.
      const more = await world.hmm(['exec', 'a', 'sh', '-c', 'echo more >> README.md && git commit -qam more'])
      expect(existsSync(ran), `exec with ${planted}`).toBe(false)
      // Its end counts no work of a repository hmm runs no git on.
      expect(more.stderr).toMatch(/ \(\?\)\n$/)
      for (const args of [['log', '-p', 'a'], ['diff', 'a'], ['merge', 'a'], ['ls']]) {
        const result = await world.hmm(args)
        expect(existsSync(ran), `${args.join(' ')} with ${planted}`).toBe(false)
        if (args[0] !== 'ls') {
          expect(result.stderr).toContain(`hmm: workspace ${id}'s private repository ${join(world.dataDir, id, 'git')} was changed by something other than hmm`)
          expect(result.exitCode).toBe(1)
        }
      }
    }
    // A file beside the config that points git elsewhere, or a hook, is as good as a changed config.
    writeFileSync(config, before)
    writeFileSync(join(world.dataDir, id, 'git', 'commondir'), world.root)
    const commondir = await world.hmm(['log', 'a'])
    expect(commondir.stderr).toContain("'s private repository")
    expect(commondir.exitCode).toBe(1)
    rmSync(join(world.dataDir, id, 'git', 'commondir'))
    world.write(join(world.dataDir, id, 'git', 'hooks', 'reference-transaction'), `#!/bin/sh\ntouch ${ran}\n`)
    const hooked = await world.hmm(['log', 'a'])
    expect(hooked.stderr).toContain("'s private repository")
    rmSync(join(world.dataDir, id, 'git', 'hooks'), {recursive: true})
    // The origin is untouched throughout, and rm -f removes what hmm no longer trusts.
    expect(await world.git(['log', '--format=%s'])).toBe('first')
    const removed = await world.hmm(['rm', '-f', 'a'])
    expect(removed.exitCode, removed.stderr).toBe(0)
    expect(existsSync(join(world.dataDir, id))).toBe(false)
    expect(existsSync(ran)).toBe(false)
  })

  it('hmm ls, stop and rm -f find the processes of a workspace whose lock file was replaced', async () => {
    world = new World('data-lock')
    await world.gitRepo()
    const token = `hmm-daemon-${process.pid}-${Date.now()}`
    world.file('daemon.sh', `trap '' HUP\nwhile :; do sleep 0.2; done\n`)
    const made = await world.hmm(['run', '-n', 'a', 'sh', '-c', `sh daemon.sh ${token} >/dev/null 2>&1 </dev/null & echo started`])
    expect(made.exitCode, made.stderr).toBe(0)
    const {id} = workspaceLine(made.stderr)
    // (The pattern does not match the shell that runs pgrep.)
    const daemons = () => world.sh(`pgrep -f '[${token[0]}]${token.slice(1)}' || true`)
    expect(await daemons()).not.toBe('')
    const lock = join(world.dataDir, id, 'lock')
    expect((await world.hmm(['ls'])).stdout).toMatch(/running/)
    // What the review's daemon did with a grant of the data directory: a new file in the lock's place.
    writeFileSync(`${lock}.new`, '')
    renameSync(`${lock}.new`, lock)
    const listed = await world.hmm(['ls'])
    expect(listed.stdout).toMatch(/ a +running /)
    const refused = await world.hmm(['rm', 'a'])
    expect(refused.stderr).toBe(`hmm: workspace ${id} (a) is running (hmm stop ${id} ends it; hmm rm -f ${id} stops and removes it)\n`)
    const stopped = await world.hmm(['stop', 'a'])
    expect(stopped.stderr).toBe(`hmm: stopped workspace ${id} (a)\n`)
    expect((await world.hmm(['ls'])).stdout).toMatch(/ a +done /)
    expect(await daemons()).toBe('')
    // rm -f ends them before it removes anything.
    const again = await world.hmm(['exec', 'a', 'sh', '-c', `sh daemon.sh ${token} >/dev/null 2>&1 </dev/null &`])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(await daemons()).not.toBe('')
    writeFileSync(`${lock}.new`, '')
    renameSync(`${lock}.new`, lock)
    const removed = await world.hmm(['rm', '-f', 'a'])
    expect(removed.exitCode, removed.stderr).toBe(0)
    expect(await daemons()).toBe('')
    expect(existsSync(join(world.dataDir, id))).toBe(false)
  })
})
