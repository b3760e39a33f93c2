// Taking work back safely (issue 3, "Security"): the workspace's repository
// belongs to the command that ran there, so nothing it configures may run
// outside the sandbox, and nothing it leaves may steer hmm outside it.
import {execa} from 'execa'
import {mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {bundleDir, bundleReader, copyRegularFile} from '../../src/git/bundle.js'
import {prepareConfined, runConfined} from '../../src/platform/confined.js'
import {Store} from '../../src/workspaces/store.js'
import {Workspace} from '../../src/workspaces/workspace.js'
import {hmmCommand, World} from '../world.js'
import {hmm, made, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const HOOKS = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'post-merge',
  'pre-merge-commit',
  'reference-transaction',
  'pre-push',
  'post-rewrite',
  'pre-auto-gc',
  'post-index-change',
  'fsmonitor-watchman',
]

/** Has the repository's git run evil.sh (by a shell, as git runs such settings) for this setting. */
const trap = (key: string, what: string) => `git config ${key} "'$PWD/evil.sh' ${what}"`

/**
 * Everything a repository's config, attributes and hooks can make git run,
 * each a script that leaves $HOME/marker-<what>: the sandboxed command
 * cannot write $HOME, so a marker means it ran outside the sandbox.
 */
const BOOBY_TRAPS = [
  `printf '#!/bin/sh\\ntouch "$HOME/marker-$1"\\n' > evil.sh && chmod +x evil.sh`,
  trap('core.fsmonitor', 'fsmonitor'),
  trap('core.pager', 'pager'),
  trap('pager.diff', 'pager-diff'),
  trap('diff.external', 'diff-external'),
  trap('diff.evil.textconv', 'textconv'),
  trap('diff.evil.command', 'diff-command'),
  trap('filter.evil.clean', 'clean'),
  trap('filter.evil.smudge', 'smudge'),
  trap('filter.evil.process', 'filter-process'),
  trap('core.sshCommand', 'ssh'),
  trap('core.alternateRefsCommand', 'alternate-refs'),
  trap('credential.helper', 'credential'),
  trap('uploadpack.packObjectsHook', 'pack-objects-hook'),
  "mkdir -p .git/info && printf '* diff=evil filter=evil\\n' > .git/info/attributes",
  "printf '* diff=evil filter=evil\\n' > .gitattributes",
  `mkdir -p hooks && for h in ${HOOKS.join(' ')}; do ` +
    `printf '#!/bin/sh\\ntouch "$HOME/marker-hook-%s"\\n' "$h" > ".git/hooks/$h" && ` +
    `printf '#!/bin/sh\\ntouch "$HOME/marker-hookspath-%s"\\n' "$h" > "hooks/$h" && chmod +x ".git/hooks/$h" "hooks/$h"; done`,
  'git config core.hooksPath "$PWD/hooks"',
].join(' && ')

/** Runs `body` with these variables set in hmm's (this process's) environment. */
function withEnv<T>(variables: Record<string, string>, body: () => T): T {
  const saved = Object.fromEntries(Object.keys(variables).map(key => [key, process.env[key]]))
  Object.assign(process.env, variables)
  try {
    return body()
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
}

function markers(): string[] {
  return readdirSync(world.home).filter(name => name.startsWith('marker-'))
}

const FAKE_GH = '#!/bin/sh\ncase "$1 $2" in "pr view") exit 1;; "pr create") echo https://github.com/owner/name/pull/1;; esac\n'

describe('taking work back safely', () => {
  it("runs nothing the workspace's repository configures: fsmonitor, pager, hooks, external diff, textconv, filters", async () => {
    world = new World('safety-traps')
    writeFileSync(
      join(world.home, '.gitconfig'),
      "[user]\n\tname = World\n\temail = world@example.com\n[init]\n\tdefaultBranch = main\n[core]\n\tpager = sed 's/^/PAGED:/'\n",
    )
    await world.gitRepo()
    const bare = join(world.root, 'remote.git')
    await world.git(['init', '-q', '--bare', bare])
    await world.git(['config', `url.${bare}.insteadOf`, 'https://github.com/owner/name'])
    await world.git(['remote', 'add', 'origin', 'https://github.com/owner/name'])
    await world.git(['push', '-q', '-u', 'origin', 'main'])
    world.write(join(world.home, 'bin', 'gh'), FAKE_GH)
    await execa('chmod', ['+x', join(world.home, 'bin', 'gh')])
    world.env.PATH = `${join(world.home, 'bin')}:${world.env.PATH}`

    const ws = await made(world, `echo one > one.txt && git add one.txt && git commit -qm one && ${BOOBY_TRAPS} && echo change >> README.md`, 'trapped')
    expect(markers()).toEqual([])

    const diff = await hmm(world, ['diff'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('+change\n')
    expect((await hmm(world, ['diff', '--stat'])).stdout).toContain('evil.sh')
    const onTerminal = await execa('script', ['-qec', hmmCommand('diff'), '/dev/null'], {
      cwd: world.origin,
      env: {...world.env, TERM: 'xterm'},
      extendEnv: false,
      reject: false,
    })
    expect(String(onTerminal.stdout)).toContain('PAGED:')
    expect((await hmm(world, ['apply', '--check'])).exitCode).toBe(0)
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toContain('change\n')
    await world.git(['reset', '-q', '--hard'])
    await world.git(['clean', '-qfd'])
    expect(await taking(world, ['merge'])).toMatchObject({
      exitCode: 0,
      stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\nhmm: workspace ${ws.label} has changes it did not commit, which are not merged\n`,
    })
    expect(await taking(world, ['pr'])).toMatchObject({exitCode: 0, stdout: 'https://github.com/owner/name/pull/1\n'})
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect(markers()).toEqual([])

    // The traps are real: git run outside the sandbox on that repository springs them.
    await execa('git', ['diff'], {cwd: ws.tree, env: world.env, extendEnv: false, reject: false})
    expect(markers().length).toBeGreaterThan(0)
  })

  it('refuses commits whose tree holds .git, with or without --force, naming the path', async () => {
    world = new World('safety-fsck')
    await world.gitRepo()
    const bare = join(world.root, 'remote.git')
    await world.git(['init', '-q', '--bare', bare])
    await world.git(['remote', 'add', 'origin', bare])
    await world.git(['push', '-q', '-u', 'origin', 'main'])
    const head = await world.git(['rev-parse', 'HEAD'])
    // An earlier commit holds .git/hooks/post-merge, the next one sub/.GIT/config: the objects of both would go into the origin.
    const ws = await made(
      world,
      [
        `b=$(printf '#!/bin/sh\\ntouch "$HOME/marker-dotgit-hook"\\n' | git hash-object -w --stdin)`,
        `hooks=$(printf '100755 blob %s\\tpost-merge\\n' "$b" | git mktree)`,
        `dotgit=$(printf '040000 tree %s\\thooks\\n' "$hooks" | git mktree)`,
        `root=$( (git ls-tree HEAD; printf '040000 tree %s\\t.git\\n' "$dotgit") | git mktree)`,
        'c=$(git commit-tree "$root" -p HEAD -m evil)',
        `upper=$(printf '100644 blob %s\\tconfig\\n' "$b" | git mktree)`,
        `sub=$(printf '040000 tree %s\\t.GIT\\n' "$upper" | git mktree)`,
        `root=$( (git ls-tree HEAD; printf '040000 tree %s\\tsub\\n' "$sub") | git mktree)`,
        'c=$(git commit-tree "$root" -p "$c" -m more)',
        'git update-ref HEAD "$c"',
      ].join(' && '),
    )
    for (const args of [['merge'], ['merge', '--force'], ['pr'], ['pr', '--force']]) {
      const result = await taking(world, args)
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toBe(
        `hmm: workspace ${ws.label}'s commits hold paths git refuses (.git, . or .. in them): .git/hooks/post-merge, sub/.GIT/config\n`,
      )
    }
    expect(await world.git(['rev-parse', 'HEAD'])).toBe(head)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    expect(await world.git(['for-each-ref', 'refs/heads/'], bare)).toBe(`${head} commit\trefs/heads/main`)
    expect(markers()).toEqual([])
  })

  it("says what git's fsck refused in the commits (a .gitmodules update = !command), taking nothing", async () => {
    // Fails closed at the fetch into the origin; git's own last words said only "index-pack failed".
    world = new World('safety-fsck-gitmodules')
    await world.gitRepo()
    const head = await world.git(['rev-parse', 'HEAD'])
    const ws = await made(
      world,
      'printf \'[submodule "x"]\\n\\tpath = x\\n\\turl = ./x\\n\\tupdate = !touch marker\\n\' > .gitmodules && git add .gitmodules && git commit -qm sm',
    )
    expect(await taking(world, ['merge'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr:
        `hmm: could not fetch the commits of workspace ${ws.label} into ${world.origin}: ` +
        "git's fsck refuses an object they hold: gitmodulesUpdate: disallowed submodule update setting: !touch marker\n",
    })
    expect(await world.git(['rev-parse', 'HEAD'])).toBe(head)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
  })

  it('names the files of a workspace whose paths git refuses, for diff, apply and rm', async () => {
    world = new World('safety-refused-files')
    await world.gitRepo()
    const ws = await made(world, 'mkdir -p sub/.GIT a/.git. && echo x > sub/.GIT/config && echo y > a/.git./c && echo z > new.txt')
    const before = snapshot(world.origin)
    const line = `hmm: workspace ${ws.label} holds files whose paths git refuses (.git, . or .. in them), so hmm cannot read its files: a/.git./c, sub/.GIT/config\n`
    for (const args of [['diff'], ['apply'], ['rm', ws.id]]) expect(await hmm(world, args)).toMatchObject({exitCode: 1, stdout: '', stderr: line})
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('takes no commits from a tree whose .git is a file or a link pointing elsewhere', async () => {
    world = new World('safety-gitfile')
    const other = join(world.root, 'other')
    await world.git(['init', '-q', other], world.root)
    writeFileSync(join(other, 'secret.txt'), 'from another repository\n')
    await world.git(['add', '-A'], other)
    await world.git(['commit', '-qm', 'other'], other)
    await world.gitRepo()
    const gitfile = await made(world, `rm -rf .git && printf 'gitdir: %s\\n' '${join(other, '.git')}' > .git && echo x > x.txt`)
    const link = await made(world, `rm -rf .git && ln -s '${join(other, '.git')}' .git && echo y > y.txt`)
    const before = snapshot(world.origin)
    for (const ws of [gitfile, link]) {
      for (const command of ['merge', 'pr']) {
        expect(await taking(world, [command, ws.id])).toEqual({
          exitCode: 1,
          stdout: '',
          stderr: `hmm: workspace ${ws.label} has no repository of its own (${join(ws.tree, '.git')} is not a directory); hmm takes commits only from it\n`,
        })
      }
      const stat = (await hmm(world, ['diff', '--stat', ws.id])).stdout
      expect(stat).not.toContain('.git')
      expect(stat).not.toContain('secret')
    }
    expect(snapshot(world.origin)).toEqual(before)
    expect((await hmm(world, ['apply', gitfile.id])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'x.txt'), 'utf8')).toBe('x\n')
    expect(await world.git(['log', '--format=%s'])).toBe('first')
  })

  // Root reads them all: a plain user's case.
  it.skipIf(process.getuid?.() === 0)('names what git cannot read of the workspace, and shows no diff without it', async () => {
    world = new World('safety-unreadable')
    await world.gitRepo()
    // A directory it cannot list: git leaves it out of what it adds, and says so only as a warning.
    const dir = await made(world, 'mkdir new && echo work > new/f && chmod 000 new')
    const before = snapshot(world.origin)
    const unreadable = `hmm: could not read the files of workspace ${dir.label}: git cannot read new/ (Permission denied); hmm exec ${dir.id} chmod -R u+rwX . gives them back\n`
    for (const command of ['diff', 'apply']) expect(await taking(world, [command, dir.id])).toEqual({exitCode: 1, stdout: '', stderr: unreadable})
    expect((await hmm(world, ['rm', dir.id])).exitCode).toBe(1)
    // A changed file it cannot open, a tracked one in a directory it cannot list (git takes it as unchanged).
    const files = await made(world, 'echo changed >> README.md && chmod 000 README.md && echo changed >> src/main.c && chmod 000 src')
    const said = (await taking(world, ['diff', files.id])).stderr
    expect(said).toMatch(
      new RegExp(
        `^hmm: could not read the files of workspace ${files.label}: git cannot read .* \\(Permission denied\\); hmm exec [0-9a-z]{6} chmod -R u\\+rwX \\. gives them back\n$`,
      ),
    )
    for (const path of ['README.md', 'src/']) expect(said).toContain(path)
    expect(snapshot(world.origin)).toEqual(before)
    // A name that breaks git's message over two lines, the second like another message.
    const split = await made(world, `d=$(printf 'a\\nerror: b') && mkdir "$d" && echo work > "$d/f" && chmod 000 "$d"`)
    const refused = await taking(world, ['diff', split.id])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toMatch(
      new RegExp(
        `^hmm: could not read the files of workspace ${split.label}: git cannot read .* \\(Permission denied\\); hmm exec [0-9a-z]{6} chmod -R u\\+rwX \\. gives them back\n$`,
      ),
    )
    // Readable again, all of it is shown.
    expect((await hmm(world, ['exec', dir.id, 'chmod', '-R', 'u+rwX', '.'])).exitCode).toBe(0)
    expect((await hmm(world, ['diff', '--stat', dir.id])).stdout).toContain('new/f')
  })

  it.skipIf(process.platform !== 'linux')(
    "is not kept waiting for ever by a FIFO where git reads a file (a nested repository's HEAD, its own HEAD)",
    async () => {
      world = new World('safety-fifo')
      await world.gitRepo()
      // A nested repository whose HEAD is a FIFO, which git opens without looking; and the workspace's own HEAD.
      const ws = await made(
        world,
        'mkdir -p sub/.git/objects sub/.git/refs && mkfifo sub/.git/HEAD && echo x > x.txt && git add x.txt && git commit -qm x && rm .git/HEAD && mkfifo .git/HEAD',
      )
      const before = snapshot(world.origin)
      const stuck = `hmm: could not read the files of workspace ${ws.label}: git was left waiting on a FIFO in it (a named pipe where git reads a file, such as a nested repository's HEAD)\n`
      for (const command of ['diff', 'apply']) {
        expect(await taking(world, [command, ws.id])).toEqual({exitCode: 1, stdout: '', stderr: stuck})
      }
      expect(await taking(world, ['merge', ws.id])).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: cannot read the HEAD of workspace ${ws.label}'s repository\n`,
      })
      // A FIFO where the sandboxed `git bundle create` (its pack-objects) reads an object.
      const blob = await made(
        world,
        'echo y > y.txt && git add y.txt && git commit -qm y && b=$(git rev-parse HEAD:y.txt) && f=.git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-) && rm -f $f && mkfifo $f',
      )
      expect(await taking(world, ['merge', blob.id])).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: could not take the commits out of workspace ${blob.label}: git was left waiting on a FIFO in its repository\n`,
      })
      expect(snapshot(world.origin)).toEqual(before)
      // And they can still be removed.
      expect((await hmm(world, ['rm', '-f', ws.id, blob.id])).exitCode).toBe(0)
      // No git hmm gave up on is left waiting (as root, its ids taken, it once outlived its helper).
      let left = ''
      for (let waited = 0; waited < 5000; waited += 100) {
        left = (await execa('pgrep', ['-af', world.root], {reject: false})).stdout
        if (!left) break
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      expect(left).toBe('')
    },
  )

  it('says so for a workspace whose tree was deleted by hand, and leaves the origin untouched', async () => {
    world = new World('safety-gone')
    await world.gitRepo()
    const ws = await made(world, 'echo one > one.txt && git add one.txt && git commit -qm one')
    rmSync(ws.tree, {recursive: true, force: true})
    const before = snapshot(world.origin)
    for (const args of [['diff'], ['diff', '--stat'], ['apply'], ['apply', '--check'], ['merge'], ['pr']]) {
      expect(await hmm(world, args)).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: workspace ${ws.label} has no tree any more (${ws.tree} is gone); hmm rm removes it\n`,
      })
    }
    expect(snapshot(world.origin)).toEqual(before)
  })
})

describe('the bundle made in the sandbox', () => {
  it('is made by a program that may read the tree but write only the bundle directory', async () => {
    world = new World('safety-bundle-policy')
    world.file('a.txt', 'in the tree\n')
    const ws = await made(world, 'true')
    const store = Store.open(world.dataDir)
    const workspace = new Workspace(store.get(ws.id)!, world.dataDir)
    store.close()
    mkdirSync(bundleDir(workspace))
    // Hidden by the user's config file, as from the command.
    const hidden = world.write(join(world.home, 'private', 'notes'), 'hidden by the config\n')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), `hide = ["${join(world.home, 'private')}"]\n`)
    const attempts = [
      `cat a.txt`,
      `cat '${join(world.dataDir, 'registry.sqlite')}' >/dev/null || echo registry-hidden`,
      `echo x > '${join(bundleDir(workspace), 'out')}' && echo bundle-written`,
      `echo x > '${join(ws.tree, 'b.txt')}' 2>/dev/null || echo tree-read-only`,
      `echo x > '${join(world.home, 'marker-home')}' 2>/dev/null || echo home-read-only`,
      `echo x > /tmp/hmm-bundle-policy-$$ 2>/dev/null || echo tmp-read-only`,
      'echo x > /dev/null && echo dev-null',
      `cat '${hidden}' 2>/dev/null || echo config-hidden`,
    ]
    const reader = withEnv({XDG_CONFIG_HOME: join(world.home, '.config')}, () => bundleReader(workspace, world.dataDir))
    const result = await runConfined({
      reader,
      cwd: ws.tree,
      command: ['sh', '-c', attempts.join('; ')],
      env: {PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: world.home},
      readsPipes: true,
    })
    expect(result.outcome).toEqual({kind: 'exited', status: 0})
    expect(result.stdout.toString()).toBe(
      'in the tree\nregistry-hidden\nbundle-written\ntree-read-only\nhome-read-only\ntmp-read-only\ndev-null\nconfig-hidden\n',
    )
    expect(markers()).toEqual([])
  })

  it('runs only what it is finally asked to: a program set up ahead for another start runs nothing and its helper exits', async () => {
    world = new World('safety-ahead-unused')
    world.file('a.txt', 'in the tree\n')
    const ws = await made(world, 'true')
    const store = Store.open(world.dataDir)
    const workspace = new Workspace(store.get(ws.id)!, world.dataDir)
    store.close()
    mkdirSync(bundleDir(workspace))
    const reader = bundleReader(workspace, world.dataDir)
    const env = {PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: world.home}
    const helpers = () => execa('pgrep', ['-P', String(process.pid), '-x', 'hmm-helper'], {reject: false}).then(r => r.stdout.trim())
    expect(await helpers()).toBe('')
    const writes = (name: string) => ['sh', '-c', `echo x > '${join(bundleDir(workspace), name)}'`]
    prepareConfined({reader, cwd: ws.tree, command: writes('ran-ahead'), env})
    const result = await runConfined({reader, cwd: ws.tree, command: writes('ran-asked'), env, readsPipes: true})
    expect(result.outcome).toEqual({kind: 'exited', status: 0})
    // The helper set up ahead got hmm's "give up" and exits (a bound on the wait, not a measure).
    for (let i = 0; i < 200 && (await helpers()) !== ''; i++) await new Promise(resolve => setTimeout(resolve, 100))
    expect(await helpers()).toBe('')
    expect(readdirSync(bundleDir(workspace))).toEqual(['ran-asked'])
  })

  /**
   * hmm merge of a workspace whose command's last commit names a blob its repository does not have, with a
   * promisor remote to fetch it from over ssh (git bundle create's pack-objects would run core.sshCommand for it,
   * here a script that connects to a socket beside the world, which any process of the user's may reach).
   * `partialOrigin`: the origin is a partial clone itself, so the workspace's repository is one from the start.
   * Returns hmm's result and whether the script ran.
   */
  async function lazyFetchAtMerge(name: string, partialOrigin: boolean): Promise<{result: {exitCode: number; stderr: string}; ran: boolean}> {
    world = new World(name)
    await world.gitRepo()
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'second'])
    const partial = [
      'git config core.repositoryformatversion 1',
      'git config extensions.partialClone origin',
      'git config remote.origin.url ssh://example.invalid/x',
      'git config remote.origin.promisor true',
      // Set already: the fetch would fail writing it (the tree is read-only there) before it ran anything.
      'git config remote.origin.partialclonefilter blob:none',
    ]
    if (partialOrigin) await world.sh(partial.join(' && '))
    const proof = join(world.root, 'proof.sock')
    let connections = 0
    const server = createServer(connection => {
      connections++
      connection.destroy()
    })
    await new Promise<void>(resolve => server.listen(proof, resolve))
    try {
      const reach = `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => shift)' '${proof}'`
      const ws = await made(
        world,
        [
          ...(partialOrigin ? [] : partial),
          // The repository's own word on the transports: outranked by hmm's.
          'git config protocol.allow always',
          'git config protocol.ssh.allow always',
          `git config core.sshCommand "${`${reach}; false`.replaceAll('"', '\\"')}"`,
          `tree=$(printf '100644 blob 1111111111111111111111111111111111111111\\tmissing\\n' | git mktree --missing)`,
          'git update-ref HEAD $(git commit-tree -p HEAD -m lazy $tree)',
        ].join(' && '),
      )
      const result = await taking(world, ['merge', ws.id])
      return {result, ran: connections > 0}
    } finally {
      server.close()
    }
  }

  // The attacker's sixth review, F11: with isolation = "landlock-only" the setting ran with the user's network.
  it("is refused when the command made the workspace's repository a partial clone: nothing its config names runs", async () => {
    const {result, ran} = await lazyFetchAtMerge('bundle-partial', false)
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(
      /^hmm: workspace \S+'s repository was made a partial clone \(extensions.partialClone in its .git\/config\), whose missing objects git would fetch; hmm takes commits only from a full one\n$/,
    )
    expect(ran).toBe(false)
  })

  it("fetches nothing for a workspace of an origin that is a partial clone: a lazy fetch's core.sshCommand does not run", async () => {
    const {result, ran} = await lazyFetchAtMerge('bundle-partial-origin', true)
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: could not take the commits out of workspace /m)
    expect(ran).toBe(false)
  })

  function scratch(): string {
    world = new World('safety-bundle')
    const dir = join(world.root, 'bundle')
    mkdirSync(dir)
    return dir
  }

  it('is copied when it is a regular file, byte for byte', () => {
    const dir = scratch()
    const bytes = Buffer.from(Array.from({length: 3_000_000}, (_, i) => (i * 7) & 0xff))
    writeFileSync(join(dir, 'out.bundle'), bytes)
    copyRegularFile(join(dir, 'out.bundle'), join(world.root, 'copy'))
    expect(readFileSync(join(world.root, 'copy')).equals(bytes)).toBe(true)
  })

  it('is refused when it is a symbolic link, a directory or a FIFO, and nothing is read through it', async () => {
    const dir = scratch()
    const secret = world.write(join(world.home, 'secret'), 'not for the bundle\n')
    symlinkSync(secret, join(dir, 'link.bundle'))
    mkdirSync(join(dir, 'dir.bundle'))
    await execa('mkfifo', [join(dir, 'fifo.bundle')])
    for (const name of ['link.bundle', 'dir.bundle', 'fifo.bundle']) {
      expect(() => copyRegularFile(join(dir, name), join(world.root, 'copy'))).toThrow(`the bundle ${join(dir, name)} is not a regular file; it is not used`)
    }
    expect(() => copyRegularFile(join(dir, 'missing.bundle'), join(world.root, 'copy'))).toThrow('was not made')
    expect(readdirSync(world.root)).not.toContain('copy')
  })
})
