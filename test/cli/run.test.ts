// `hmm run`, line by line of SPEC.
import {execa} from 'execa'
import {
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  readdirSync,
  statSync,
  utimesSync,
  chmodSync,
  symlinkSync,
  mkdirSync,
  realpathSync,
  copyFileSync,
  openSync,
  closeSync,
  constants,
  writeFileSync,
} from 'node:fs'
import {createServer} from 'node:net'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, CLOSED_TO_OTHERS, PROJECT, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

function lines(stderr: string): string[] {
  return stderr.split('\n').filter(line => line.startsWith('hmm: workspace '))
}

/** Makes the user's excludes file in `world` a FIFO: git add of the origin waits on it until it is written. */
async function excludesFifo(world: World): Promise<string> {
  const fifo = join(world.home, 'excludes')
  await execa('mkfifo', [fifo])
  await world.git(['config', 'core.excludesFile', fifo])
  return fifo
}

/**
 * Opens the FIFO `fifo` for writing once hmm's git has opened it to read
 * (the user's excludes file: git add of the origin then waits on it).
 */
async function openWhenRead(fifo: string, started: {stderr: string}): Promise<number> {
  for (let tries = 0; ; tries++) {
    if (tries > 600) throw new Error(`git never read the excludes file; stderr: ${started.stderr}`)
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    } catch {
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
}

const removals = (stderr: string) => stderr.split('\n').filter(line => line.startsWith('hmm: removed '))

describe('hmm run', () => {
  it('prints the workspace line when the command starts and again when it exits, and exits with its status', async () => {
    world = new World('run-status')
    const result = await world.hmm(['run', '-n', 'parser', 'sh', '-c', 'echo out; exit 3'])
    expect(result.exitCode).toBe(3)
    expect(result.stdout).toBe('out\n')
    const ws = workspaceLine(result.stderr)
    expect(ws.name).toBe('parser')
    expect(ws.tree).toBe(join(world.dataDir, ws.id, 'tree', 'proj'))
    // The last line ends with what the workspace now holds (WORK): nothing here.
    expect(lines(result.stderr)).toEqual([`hmm: workspace ${ws.id} (parser): ${ws.tree}`, `hmm: workspace ${ws.id} (parser): ${ws.tree} (-)`])
  })

  it('says in one line which data directory it cannot make, and why', async () => {
    world = new World('run-no-data')
    const blocked = world.write(join(world.root, 'a-file'), 'not a directory\n')
    const result = await world.hmm(['run', 'true'], {env: {...world.env, HMM_HOME: join(blocked, 'hmm')}})
    expect(result).toMatchObject({exitCode: 1, stderr: `hmm: cannot make hmm's data directory ${join(blocked, 'hmm')}: not a directory\n`})
  })

  // Root reads it: a plain user's case.
  it.skipIf(process.getuid?.() === 0)('says, of a place of the tree it cannot read, how to leave it out, the patterns in force kept', async () => {
    world = new World('run-unreadable-place')
    await world.gitRepo()
    world.file('pgdata/base/1', 'rows\n')
    chmodSync(join(world.origin, 'pgdata'), 0o000)
    try {
      const result = await world.hmm(['run', 'true'])
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toBe(
        `hmm: could not clone ${world.origin}: ${join(world.origin, 'pgdata')}: Permission denied (to leave it out, put exclude = [".env", ".env.*", "!.env.example", "!.env.sample", "!.env.template", "/pgdata"] in hmm's config file)\n`,
      )
      world.write(
        join(world.home, '.config', 'hmm', 'config.toml'),
        'exclude = [".env", ".env.*", "!.env.example", "!.env.sample", "!.env.template", "/pgdata"]\n',
      )
      const again = await world.hmm(['run', 'true'])
      expect(again.exitCode, again.stderr).toBe(0)
    } finally {
      chmodSync(join(world.origin, 'pgdata'), 0o755)
    }
  })

  it('exits with 128 + the signal that ended the command', async () => {
    world = new World('run-signal')
    const result = await world.hmm(['run', 'sh', '-c', 'kill -TERM $$'])
    expect(result.exitCode).toBe(143)
  })

  it('runs the command in the tree, told its workspace (and that it is sandboxed only where an agent needs it: agents-planted.test)', async () => {
    world = new World('run-env')
    const result = await world.hmm(['run', 'sh', '-c', 'pwd; echo "$HMM_WORKSPACE ${CLAUDE_CODE_SANDBOXED-unset}"'])
    const ws = workspaceLine(result.stderr)
    expect(result.stdout).toBe(`${ws.tree}\n${ws.id} unset\n`)
  })

  it("passes everything from the command on to the command, hmm's flags included", async () => {
    world = new World('run-argv')
    const result = await world.hmm(['run', 'printf', '%s\\n', '--resume', '-n', 'x', '--rm'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe('--resume\n-n\nx\n--rm\n')
    expect(workspaceLine(result.stderr).name).toBeUndefined()
    expect((await world.hmm(['ls'])).stdout).toMatch(/^ID/)
  })

  it('runs $SHELL without a command', async () => {
    world = new World('run-shell')
    const result = await world.hmm(['run'], {input: 'echo "in $0"; exit 4'})
    expect(result.stdout).toBe('in /bin/sh\n')
    expect(result.exitCode).toBe(4)
  })

  it('says command not found with 127, and keeps the workspace', async () => {
    world = new World('run-notfound')
    const result = await world.hmm(['run', 'no-such-command-hmm'])
    expect(result.exitCode).toBe(127)
    expect(result.stderr).toContain('hmm: no-such-command-hmm: command not found\n')
    const ws = workspaceLine(result.stderr)
    expect(existsSync(ws.tree)).toBe(true)
  })

  it('says why a command cannot be executed with 126', async () => {
    world = new World('run-noexec')
    world.file('script.sh', 'echo hi\n')
    chmodSync(join(world.origin, 'script.sh'), 0o644)
    const result = await world.hmm(['run', './script.sh'])
    expect(result.exitCode).toBe(126)
    expect(result.stderr).toMatch(/^hmm: \.\/script\.sh: permission denied$/m)
  })

  it('with --rm removes the workspace when the command exits, also when it failed or could not start, prints the line once and what it threw away', async () => {
    world = new World('run-rm')
    for (const [command, thrown] of [
      [['true'], undefined],
      [['sh', '-c', 'echo change > f; exit 5'], '1 file'],
      [['no-such-command-hmm'], undefined],
    ] as const) {
      const result = await world.hmm(['run', '--rm', ...command])
      const ws = workspaceLine(result.stderr)
      expect(lines(result.stderr)).toHaveLength(1)
      expect(removals(result.stderr), result.stderr).toEqual(thrown ? [`hmm: removed workspace ${ws.id}, discarding ${thrown}`] : [])
      expect(existsSync(join(world.dataDir, ws.id))).toBe(false)
    }
    expect((await world.hmm(['ls'])).stdout).toBe('')
    await world.gitRepo()
    const committed = await world.hmm(['run', '--rm', 'sh', '-c', 'echo a > a && git add a && git commit -qm a && echo b > b'])
    expect(removals(committed.stderr)).toEqual([`hmm: removed workspace ${workspaceLine(committed.stderr).id}, discarding 1 commit, 1 file`])
  })

  it('clones everything: repository, uncommitted and untracked changes, ignored build output, links, modes, mtimes', async () => {
    world = new World('run-clone')
    await world.gitRepo()
    world.file('bin/tool', '#!/bin/sh\n')
    chmodSync(join(world.origin, 'bin/tool'), 0o750)
    utimesSync(join(world.origin, 'bin/tool'), new Date('2020-01-02T03:04:05Z'), new Date('2020-01-02T03:04:05Z'))
    symlinkSync('README.md', join(world.origin, 'link'))
    const result = await world.hmm(['run', 'true'])
    const {tree} = workspaceLine(result.stderr)
    expect(readFileSync(join(tree, 'README.md'), 'utf8')).toBe('hello\nuncommitted\n')
    expect(readFileSync(join(tree, 'notes.txt'), 'utf8')).toBe('untracked\n')
    expect(readFileSync(join(tree, 'build/out.o'), 'utf8')).toBe('ignored build output\n')
    expect(existsSync(join(tree, '.git/HEAD'))).toBe(true)
    expect(lstatSync(join(tree, 'link')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(tree, 'link'))).toBe('README.md')
    expect(statSync(join(tree, 'bin/tool')).mode & 0o7777).toBe(0o750)
    expect(statSync(join(tree, 'bin/tool')).mtime.toISOString()).toBe('2020-01-02T03:04:05.000Z')
    expect(await world.git(['status', '--porcelain'], tree)).toBe(await world.git(['status', '--porcelain']))
  })

  it('runs in a repository whose last file asked about is 10 bytes long (a stat answer ending in a newline byte)', async () => {
    // The stat pairs are binary: a record ending in 0x0a (a size of 10) must
    // not be taken for a final newline and stripped.
    world = new World('run-stat-newline')
    await world.git(['init', '-q'])
    world.file('a', 'one\n')
    await world.git(['add', 'a'])
    await world.git(['commit', '-qm', 'one'])
    world.file('a', 'uncommitted\n')
    world.file('untracked', 'untracked\n')
    const result = await world.hmm(['run', 'true'])
    expect(result.stderr).not.toMatch(/stat pairs/)
    expect(result.exitCode).toBe(0)
    world.file('.gitignore', 'target/\n')
    world.file('target/out', 'build out\n')
    const again = await world.hmm(['run', 'true'])
    expect(again.stderr).not.toMatch(/stat pairs/)
    expect(again.exitCode).toBe(0)
  })

  it("leaves the origin's index, refs, stash and objects byte-for-byte unchanged", async () => {
    world = new World('run-origin-unchanged')
    await world.gitRepo()
    world.file('stashed.txt', 'x\n')
    await world.git(['add', 'stashed.txt'])
    await world.git(['stash', '-q'])
    world.file('staged.txt', 'staged\n')
    await world.git(['add', 'staged.txt'])
    const snapshot = async () =>
      world.sh(`cd .git && find . -type f ! -name '*.lock' | sort | xargs sha256sum; git -C .. stash list; git -C .. status --porcelain`)
    const before = await snapshot()
    const result = await world.hmm(['run', 'sh', '-c', 'echo agent > README.md; git add -A; git commit -qm agent'])
    expect(result.exitCode).toBe(0)
    expect(await snapshot()).toBe(before)
  })

  it('clones file names with spaces, newlines, leading dashes and non-ASCII, FIFOs, sockets and empty directories', async () => {
    world = new World('run-names')
    for (const name of ['a b.txt', 'new\nline.txt', '-rf', '--help', 'héllo wörld ☃.txt']) world.file(name, name)
    mkdirSync(join(world.origin, 'empty dir'))
    await execa('mkfifo', [join(world.origin, 'fifo')])
    const server = createServer().listen(join(world.origin, 'sock'))
    await new Promise(resolve => server.on('listening', resolve))
    try {
      const result = await world.hmm(['run', 'ls', '-a'])
      expect(result.exitCode).toBe(0)
      const {tree} = workspaceLine(result.stderr)
      for (const name of ['a b.txt', 'new\nline.txt', '-rf', '--help', 'héllo wörld ☃.txt']) {
        expect(readFileSync(join(tree, name), 'utf8')).toBe(name)
      }
      expect(readdirSync(join(tree, 'empty dir'))).toEqual([])
      expect(lstatSync(join(tree, 'fifo')).isFIFO()).toBe(true)
      // A socket is a live endpoint, not data: skipped with a note, never a crash.
      expect(existsSync(join(tree, 'sock'))).toBe(false)
      expect(result.stderr).toContain('sock')
    } finally {
      server.close()
    }
  })

  it('lets the command write -w paths, and refuses a -w path that does not exist before making anything', async () => {
    world = new World('run-w')
    const extra = join(world.home, 'extra')
    mkdirSync(extra)
    const ok = await world.hmm(['run', '-w', extra, 'sh', '-c', `echo x > '${extra}/written'`])
    expect(ok.exitCode).toBe(0)
    expect(readFileSync(join(extra, 'written'), 'utf8')).toBe('x\n')
    const missing = join(world.home, 'missing')
    const bad = await world.hmm(['run', '-w', missing, 'true'])
    expect(bad).toMatchObject({exitCode: 1, stderr: `hmm: ${missing} does not exist\n`})
    expect((await world.hmm(['ls', '--json'])).stdout).toMatch(/^\[\s*\{[^[]*\}\s*\]\n$/) // only the first one
  })

  it('says, as the command starts, which links at the top of the tree lead to a directory it cannot write, and the -w that would', async () => {
    // The new user's review 23, finding 5: an ignored `build` linked to a directory on another disk; the build failed in
    // the workspace with "Permission denied", and nothing said why.
    world = new World('run-link-out')
    const cache = join(world.home, 'cache', 'build')
    mkdirSync(cache, {recursive: true})
    symlinkSync(cache, join(world.origin, 'build'))
    // Not said: a link inside the tree, a link to a file.
    mkdirSync(join(world.origin, 'lib'))
    symlinkSync('lib', join(world.origin, 'src'))
    symlinkSync(world.write(join(world.home, 'notes.txt'), 'n\n'), join(world.origin, 'notes'))
    const notes = (stderr: string) => stderr.split('\n').filter(line => line.includes('leads out'))
    const refused = await world.hmm(['run', 'sh', '-c', 'touch build/out'])
    expect(refused.exitCode).toBe(1)
    expect(notes(refused.stderr)).toEqual([`hmm: build -> ${cache} leads out of the workspace, where the command cannot write (hmm run -w ${cache} lets it)`])
    const granted = await world.hmm(['run', '-w', cache, 'sh', '-c', 'touch build/out'])
    expect(granted.exitCode).toBe(0)
    expect(notes(granted.stderr)).toEqual([])
    expect(existsSync(join(cache, 'out'))).toBe(true)
  })

  it('refuses, making nothing, when the command could write hmm itself or the Node running it (-w); a TMPDIR above them is not granted', async () => {
    world = new World('run-own-files')
    const project = realpathSync(PROJECT)
    const above = dirname(project)
    const viaW = await world.hmm(['run', '-w', above, 'true'])
    expect(viaW).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: hmm is installed in ${project}, which the sandboxed command could write (${above}); install hmm elsewhere\n`,
    })
    // A TMPDIR above hmm and the home (the worlds lie in the checkout, or in /var/tmp): not granted, the command gets its own.
    let both = above
    while (both !== '/' && !world.home.startsWith(`${both}/`)) both = dirname(both)
    const written = join(project, 'bin', 'written-by-the-command')
    const viaTmpdir = await world.hmm(['run', '--rm', 'sh', '-c', `touch '${written}' 2>/dev/null; echo "$? $TMPDIR"`], {env: {...world.env, TMPDIR: both}})
    expect({exitCode: viaTmpdir.exitCode, stdout: viaTmpdir.stdout}).toEqual({exitCode: 0, stdout: '1 /tmp\n'})
    expect(existsSync(written)).toBe(false)
    const node = realpathSync(process.execPath)
    const viaNode = await world.hmm(['run', '-w', dirname(node), 'true'])
    expect(viaNode.stderr).toBe(`hmm: node is installed in ${node}, which the sandboxed command could write (${dirname(node)}); install node elsewhere\n`)
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })

  it('refuses a taken or invalid name, making nothing', async () => {
    world = new World('run-names-taken')
    expect((await world.hmm(['run', '-n', 'p', 'true'])).exitCode).toBe(0)
    const taken = await world.hmm(['run', '-n', 'p', 'true'])
    expect(taken).toMatchObject({exitCode: 1, stderr: `hmm: ${world.origin} already has a workspace named p\n`})
    const invalid = await world.hmm(['run', '-n', 'a/b', 'true'])
    expect(invalid).toMatchObject({exitCode: 1, stderr: "hmm: a workspace's name is letters, digits, '-', '_' and '.', not starting with '-': a/b\n"})
    const dashed = await world.hmm(['run', '--name=-x', 'true'])
    expect(dashed.exitCode).toBe(1)
    expect(JSON.parse((await world.hmm(['ls', '--json'])).stdout)).toHaveLength(1)
    expect(readdirSync(world.dataDir).filter(entry => /^[0-9a-z]{6}$/.test(entry))).toHaveLength(1)
  })

  it('refuses, making nothing, a name git refuses as a branch name (hmm pr pushes hmm/<name>), and takes what git takes', async () => {
    world = new World('run-names-git')
    for (const name of ['a..b', 'x.lock', '.hidden', 'x.']) {
      expect(await world.hmm(['run', '-n', name, 'true']), name).toMatchObject({
        exitCode: 1,
        stderr: `hmm: a workspace's name may not start with '.', hold '..', or end with '.' or '.lock' (git refuses it as a branch name): ${name}\n`,
      })
    }
    // What SPEC's own rule refuses keeps SPEC's message.
    for (const name of ['.', '..']) {
      expect((await world.hmm(['run', '-n', name, 'true'])).stderr, name).toBe(
        `hmm: a workspace's name is letters, digits, '-', '_' and '.', not starting with '-': ${name}\n`,
      )
    }
    expect(existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(entry => /^[0-9a-z]{6}$/.test(entry)) : []).toEqual([])
    for (const name of ['a.lock.b', 'v1.2', 'a.b_c-d']) {
      expect((await world.hmm(['run', '-n', name, 'true'])).exitCode, name).toBe(0)
      expect((await execa('git', ['check-ref-format', '--branch', `hmm/${name}`])).exitCode, name).toBe(0)
    }
  })

  it('gives usage errors one line and exit 1', async () => {
    world = new World('run-usage')
    for (const args of [['run', '-n'], ['run', '--bogus', 'true'], ['bogus'], ['ls', '-z']]) {
      const result = await world.hmm(args)
      expect(result.exitCode, args.join(' ')).toBe(1)
      expect(result.stderr, args.join(' ')).toMatch(/^hmm: [^\n]+\n$/)
    }
  })

  it("refuses to run in the data directory or inside a workspace's tree", async () => {
    world = new World('run-in-data')
    const first = await world.hmm(['run', 'true'])
    const {tree} = workspaceLine(first.stderr)
    const inTree = await world.hmm(['run', 'true'], {cwd: tree})
    expect(inTree.exitCode).toBe(1)
    expect(inTree.stderr).toMatch(/^hmm: .* is inside hmm's data directory .*\n$/)
    const inData = await world.hmm(['run', 'true'], {cwd: world.dataDir})
    expect(inData.exitCode).toBe(1)
    const holding = await world.hmm(['run', 'true'], {cwd: world.home})
    expect(holding.stderr).toMatch(/^hmm: .* holds hmm's data directory/)
  })

  it("refuses, making nothing, to run inside a git directory (a repository's .git, a bare repository), whose files are no work tree", async () => {
    world = new World('run-in-git-dir')
    await world.gitRepo()
    const bare = join(world.home, 'bare.git')
    await world.git(['clone', '-q', '--bare', world.origin, bare])
    for (const dir of [join(world.origin, '.git'), join(world.origin, '.git', 'refs', 'heads'), bare, join(bare, 'objects')]) {
      const result = await world.hmm(['run', 'true'], {cwd: dir})
      expect(result, dir).toMatchObject({exitCode: 1, stderr: `hmm: ${dir} is inside a git directory; run hmm in a work tree\n`})
    }
    expect(existsSync(world.dataDir) ? readdirSync(world.dataDir).filter(entry => /^[0-9a-z]{6}$/.test(entry)) : []).toEqual([])
    // A directory named like a git directory's, in the work tree, is the work tree's.
    mkdirSync(join(world.origin, 'objects'))
    expect((await world.hmm(['run', '--rm', 'true'], {cwd: join(world.origin, 'objects')})).exitCode).toBe(0)
  })

  // hmm inside runs from the checkout: root's command (ids that own no file) cannot reach one beneath a 0700 directory.
  const unreachable = process.getuid?.() === 0 && CLOSED_TO_OTHERS
  it.skipIf(unreachable)(
    `says in one line that hmm cannot list from inside a workspace, where its registry is hidden${unreachable ? ` (skipped: the checkout lies beneath ${CLOSED_TO_OTHERS}, which only root may search)` : ''}`,
    async () => {
      world = new World('run-hmm-inside')
      const result = await world.hmm(['run', 'sh', '-c', `'${process.execPath}' '${BIN}' ls; echo "status $?"`])
      expect(result.stdout).toBe('status 1\n')
      const inner = result.stderr.split('\n').filter(line => !line.startsWith('hmm: workspace ') && line !== '')
      expect(inner).toEqual([
        `hmm: cannot open hmm's registry ${join(world.dataDir, 'registry.sqlite')}: it cannot be read (a command in a workspace may not read hmm's data directory)`,
      ])
    },
  )

  it('says in one line, without a stack trace, that hmm is not built', async () => {
    world = new World('run-not-built')
    const copy = join(world.root, 'hmm')
    mkdirSync(join(copy, 'bin'), {recursive: true})
    for (const file of ['run.js', 'package.json']) copyFileSync(join(PROJECT, 'bin', file), join(copy, 'bin', file))
    for (const args of [[], ['run', 'true']]) {
      const result = await execa(process.execPath, [join(copy, 'bin', 'run.js'), ...args], {cwd: world.origin, env: world.env, extendEnv: false, reject: false})
      expect(result.stderr).toBe(`hmm: ${join(copy, 'dist')} is not built: run npm install (or npm run build) in ${copy}`)
      expect(result.exitCode).toBe(1)
    }
  })

  it('says in one line that its private repository could not be made while it recorded the origin, and leaves nothing behind', async () => {
    world = new World('run-init-fails')
    await world.gitRepo()
    // The user's excludes file, a FIFO, holds hmm's git add of the origin while its git init fails (a git on PATH that
    // fails init): the failure comes while hmm still waits for the add.
    const fifo = await excludesFifo(world)
    const bin = join(world.root, 'bin')
    mkdirSync(bin)
    const git = (await execa('sh', ['-c', 'command -v git'])).stdout
    writeFileSync(join(bin, 'git'), `#!/bin/sh\n[ "$1" = init ] && exit 1\nexec ${git} "$@"\n`, {mode: 0o755})
    world.env.PATH = `${bin}:${world.env.PATH}`
    const started = world.start(['run', '-n', 'noinit', 'true'])
    const writer = await openWhenRead(fifo, started)
    // git init has failed by now (it ran beside the add); then the add ends.
    await new Promise(resolve => setTimeout(resolve, 500))
    closeSync(writer)
    const result = await started.result()
    expect(result.stderr).toBe('hmm: git init failed: exit status 1\n')
    expect(result).toMatchObject({exitCode: 1, stdout: ''})
    expect((await world.hmm(['ls', '-a', '--json'])).stdout).toBe('[]\n')
  })

  it('says in one line that Ctrl-C while it was still making the workspace interrupted it, leaves nothing behind and exits 130', async () => {
    world = new World('run-interrupted')
    await world.gitRepo()
    // The user's excludes file, a FIFO, holds hmm's git add of the origin (the user's git reads it) while it records
    // the origin; opening it for writing succeeds once git has opened it to read.
    const fifo = await excludesFifo(world)
    const started = world.start(['run', '-n', 'cut', 'true'])
    const writer = await openWhenRead(fifo, started)
    // As Ctrl-C does: SIGINT to the whole process group (hmm, its git, the helper).
    process.kill(-started.child.pid!, 'SIGINT')
    const result = await started.result()
    closeSync(writer)
    expect(result.stderr).toMatch(/^hmm: interrupted before the command started: workspace [0-9a-z]{6} \(cut\) removed\n$/)
    expect(result).toMatchObject({exitCode: 130, stdout: ''})
    expect((await world.hmm(['ls', '-a', '--json'])).stdout).toBe('[]\n')
    expect(readdirSync(world.dataDir).filter(entry => /^[0-9a-z]{6}$/.test(entry))).toEqual([])
  })

  it('forwards SIGTERM to the command and waits for it', async () => {
    world = new World('run-forward')
    const started = world.start(['run', 'sh', '-c', 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done'])
    await started.line('ready')
    started.child.kill('SIGTERM')
    const result = await started.result()
    expect(result.stdout).toContain('got-term')
    expect(result.exitCode).toBe(7)
  })
})
