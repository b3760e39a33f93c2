// Git's credentials kept in its config files (the attacker's fifth review,
// F6): a token in the origin's .git/config (actions/checkout's persisted
// extraheader, a remote URL's userinfo) or in ~/.gitconfig (an insteadOf
// URL with a login, http.extraHeader) is not the command's to read. The
// workspace's repository and the command's view of ~/.gitconfig have them
// removed; the user's own files keep them.
import {mkdirSync, readFileSync, renameSync, rmSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {shellQuote, World} from '../world.js'

let world: World
beforeEach(async () => {
  world = new World('git-credentials')
  await world.gitRepo()
  await world.git(['config', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic TOKEN-extraheader'])
  await world.git(['remote', 'add', 'origin', 'https://x-access-token:TOKEN-url@github.com/org/repo.git'])
  await world.git(['config', 'remote.origin.pushurl', 'https://TOKEN-pushurl@github.com/org/repo.git'])
  await world.git(['config', 'remote.mirror.url', 'ssh://git@example.com/org/repo.git'])
  // A submodule's repository (its name a path), where actions/checkout persists the token too.
  world.write(join(world.origin, '.git', 'modules', 'lib', 'sub', 'HEAD'), 'ref: refs/heads/main\n')
  world.write(
    join(world.origin, '.git', 'modules', 'lib', 'sub', 'config'),
    '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic TOKEN-module\n',
  )
  await world.sh(`git config --global url.https://oauth2:TOKEN-insteadof@gitlab.com/.insteadOf https://gitlab.com/
git config --global http.extraHeader 'Authorization: Bearer TOKEN-global'`)
})
afterEach(() => world.dispose())

/** What the command reads of git's config files, and what git there says of it. */
const READ = 'cat .git/config .git/modules/lib/sub/config ~/.gitconfig; git remote get-url origin; git remote get-url --push origin; git config user.name'

describe("git's credentials in its config files", () => {
  it("are not in the workspace's repository nor in ~/.gitconfig as the command reads them; the rest of the config is", async () => {
    const result = await world.hmm(['run', '-n', 'w', 'sh', '-c', READ])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('TOKEN')
    expect(result.stdout).toContain('https://github.com/org/repo.git\nhttps://github.com/org/repo.git\nWorld\n')
    expect(result.stdout).toContain('ssh://git@example.com/org/repo.git')
    // hmm exec: the same.
    const again = await world.hmm(['exec', 'w', 'sh', '-c', READ])
    expect(again.stdout).not.toContain('TOKEN')
    // The user's own files are as they were: hmm pr pushes with the origin's.
    const origin = readFileSync(join(world.origin, '.git', 'config'), 'utf8')
    for (const token of ['TOKEN-extraheader', 'TOKEN-url', 'TOKEN-pushurl']) expect(origin).toContain(token)
    expect(readFileSync(join(world.origin, '.git', 'modules', 'lib', 'sub', 'config'), 'utf8')).toContain('TOKEN-module')
    const global = readFileSync(join(world.home, '.gitconfig'), 'utf8')
    for (const token of ['TOKEN-insteadof', 'TOKEN-global']) expect(global).toContain(token)
  })

  it('are not read through ~/.gitconfig linked to a dotfiles repository, nor there', async () => {
    mkdirSync(join(world.home, 'dotfiles'))
    renameSync(join(world.home, '.gitconfig'), join(world.home, 'dotfiles', 'gitconfig'))
    symlinkSync(join('dotfiles', 'gitconfig'), join(world.home, '.gitconfig'))
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `${READ}; cat ~/dotfiles/gitconfig`])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('TOKEN')
    expect(result.stdout).toContain('World\n')
    expect(readFileSync(join(world.home, 'dotfiles', 'gitconfig'), 'utf8')).toContain('TOKEN-global')
  })

  // The attacker's sixth review: F3 (actions/checkout v6 keeps the job's token in a file the clone's config
  // includes), F9 (a credential helper printing a password; the system's config), and the origin's own config.
  it("are not read in the origin's repository, the system's config, files a config includes, nor a helper that prints a password; the rest is", async () => {
    const included = world.write(
      join(world.root, 'runner', '_temp', 'git-credentials-1f2e.config'),
      '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic TOKEN-included\n',
    )
    await world.git(['config', `includeIf.gitdir:${world.origin}/.git.path`, included])
    world.write(join(world.home, '.gitconfig.local'), '[url "https://me:TOKEN-local@git.example/"]\n\tinsteadOf = https://git.example/\n[core]\n\tabbrev = 9\n')
    const system = world.write(join(world.root, 'etc', 'gitconfig'), '[http]\n\textraHeader = Authorization: Bearer TOKEN-system\n[core]\n\tpager = less\n')
    await world.sh(`git config --global include.path .gitconfig.local
git config --global credential.https://example.com.helper '!f() { echo username=x; echo password=TOKEN-helper; }; f'
git config --global --add credential.https://example.com.helper cache`)
    const read = `${READ}; cat ${shellQuote(join(world.origin, '.git', 'config'), included)} ~/.gitconfig.local ${shellQuote(system)}; git config core.abbrev; git config core.pager; git config --get-all credential.https://example.com.helper`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', read], {env: {...world.env, GIT_CONFIG_SYSTEM: system}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('TOKEN')
    expect(result.stdout).toMatch(/\n9\nless\ncache\n$/)
    // The user's own files are as they were.
    expect(readFileSync(included, 'utf8')).toContain('TOKEN-included')
    expect(readFileSync(join(world.home, '.gitconfig.local'), 'utf8')).toContain('TOKEN-local')
    expect(readFileSync(join(world.home, '.gitconfig'), 'utf8')).toContain('TOKEN-helper')
    expect(readFileSync(system, 'utf8')).toContain('TOKEN-system')
  })

  it.skipIf(process.getuid?.() !== 0)("run as root, are not read in other users' git configs (root only: a user cannot read them anyway)", async () => {
    const other = `/home/hmm-git-credentials-test-${process.pid}`
    try {
      world.write(join(other, '.gitconfig'), '[url "https://alice:TOKEN-alice@github.com/"]\n\tinsteadOf = https://github.com/\n[user]\n\tname = Alice\n')
      world.write(join(other, '.config', 'git', 'config'), '[http]\n\textraheader = AUTHORIZATION: basic TOKEN-alice-xdg\n')
      const result = await world.hmm(['run', '--rm', 'sh', '-c', `cat ${other}/.gitconfig ${other}/.config/git/config`])
      expect(result.exitCode, result.stderr).toBe(0)
      expect(result.stdout).not.toContain('TOKEN')
      expect(result.stdout).toContain('name = Alice')
    } finally {
      rmSync(other, {recursive: true, force: true})
    }
  })
})
