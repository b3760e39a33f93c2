// `hmm apply`, line by line of SPEC.
import {randomBytes} from 'node:crypto'
import {execa} from 'execa'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it, onTestFinished} from 'vitest'
import {whenWritten, World} from '../world.js'
import {hmm, made, said, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

describe('hmm apply', () => {
  it("makes the workspace's changes in the origin's files, over unrelated changes, nothing staged or committed", async () => {
    world = new World('apply-basic')
    await world.gitRepo()
    const head = await world.git(['rev-parse', 'HEAD'])
    const ws = await made(world, 'echo c > c.txt && git add c.txt && git commit -qm c && echo more >> README.md && rm src/main.c && echo u > u.txt')
    world.file('unrelated.txt', 'the user went on working\n')
    const result = await hmm(world, ['apply'])
    expect(result).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${ws.id} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'c.txt'), 'utf8')).toBe('c\n')
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nuncommitted\nmore\n')
    expect(existsSync(join(world.origin, 'src/main.c'))).toBe(false)
    expect(readFileSync(join(world.origin, 'u.txt'), 'utf8')).toBe('u\n')
    expect(readFileSync(join(world.origin, 'unrelated.txt'), 'utf8')).toBe('the user went on working\n')
    expect(await world.git(['diff', '--cached', '--name-only'])).toBe('')
    expect(await world.git(['rev-parse', 'HEAD'])).toBe(head)
  })

  it('takes binary, empty and mode-only changes in a directory whose name ends in a space (git apply cannot read the header git makes for them)', async () => {
    world = new World('apply-space-dir')
    await world.gitRepo()
    world.file('d /script', 'echo hi\n')
    await world.git(['add', 'd /script'])
    await world.git(['commit', '-qm', 'script'])
    await world.hmm(['run', 'sh', '-c', 'printf "a\\000b" > "d /bin" && : > "d /empty" && chmod +x "d /script"'])
    const result = await hmm(world, ['apply'])
    expect(result.stderr).toMatch(/^hmm: applied workspace /)
    expect(readFileSync(join(world.origin, 'd /bin'))).toEqual(Buffer.from('a\0b'))
    expect(readFileSync(join(world.origin, 'd /empty'), 'utf8')).toBe('')
    expect(lstatSync(join(world.origin, 'd /script')).mode & 0o100).toBe(0o100)
  })

  it('with --check changes nothing and says it applies', async () => {
    world = new World('apply-check')
    await world.gitRepo()
    const ws = await made(world, 'echo more >> README.md', 'chk')
    const before = snapshot(world.origin)
    const result = await hmm(world, ['apply', '--check', 'chk'])
    expect(result).toEqual({exitCode: 0, stdout: '', stderr: `hmm: workspace ${ws.label} applies to ${world.origin}\n`})
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("applies all or nothing: where the origin changed in the same place, nothing changes and git's reason follows", async () => {
    world = new World('apply-conflict')
    await world.gitRepo()
    const ws = await made(world, 'echo new > new.txt && echo ws > README.md')
    world.file('README.md', 'the origin changed this line\n')
    const before = snapshot(world.origin)
    for (const args of [['apply'], ['apply', '--check']]) {
      const result = await hmm(world, args)
      expect(result.exitCode).toBe(1)
      const lines = said(result.stderr)
      expect(result.stderr.split('\n').filter(Boolean)).toEqual(lines)
      expect(lines[0]).toBe(`hmm: workspace ${ws.label} does not apply to ${world.origin}`)
      expect(lines.slice(1).join('\n')).toContain('README.md: patch does not apply')
      // What to do about it, last.
      expect(lines.at(-1)).toBe(`hmm: hmm apply --3way ${ws.id} takes what applies and leaves conflict markers where ${world.origin} changed the same lines`)
      expect(snapshot(world.origin)).toEqual(before)
    }
    expect(existsSync(join(world.origin, 'new.txt'))).toBe(false)
  })

  it('with --3way applies what applies and leaves conflict markers where the origin changed the same lines, exit 1', async () => {
    world = new World('apply-3way')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'readme'])
    const ws = await made(world, 'echo new > new.txt && printf "hello\\nfrom the workspace\\n" > README.md', 'tw')
    world.file('README.md', 'hello\nfrom the origin\n')
    const head = await world.git(['rev-parse', 'HEAD'])
    const result = await hmm(world, ['apply', '--3way'])
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${ws.label} applied to ${world.origin} with conflicts in 1 file\n`,
    })
    expect(readFileSync(join(world.origin, 'new.txt'), 'utf8')).toBe('new\n')
    const readme = readFileSync(join(world.origin, 'README.md'), 'utf8')
    expect(readme).toMatch(/^hello\n<<<<<<< .*\nfrom the origin\n=======\nfrom the workspace\n>>>>>>> .*\n$/)
    expect(readme).toContain(`>>>>>>> workspace ${ws.label}\n`)
    // Nothing staged or committed: the origin's index and HEAD are as they were.
    expect(await world.git(['diff', '--cached', '--name-only'])).toBe('')
    expect(await world.git(['ls-files', '--unmerged'])).toBe('')
    expect(await world.git(['rev-parse', 'HEAD'])).toBe(head)
  })

  it('with --3way, as without, writes nothing through a symbolic link of the origin', async () => {
    world = new World('apply-3way-link')
    await world.gitRepo()
    world.file('.gitignore', 'data\n')
    await world.git(['add', '.gitignore'])
    await world.git(['commit', '-qm', 'ignore data'])
    const outside = join(world.root, 'outside')
    mkdirSync(outside)
    symlinkSync(outside, join(world.origin, 'data'))
    const ws = await made(world, 'rm data && mkdir data && echo pwned > data/evil && : > .gitignore', 'ln')
    const before = snapshot(world.origin)
    for (const args of [
      ['apply', 'ln'],
      ['apply', '--3way', 'ln'],
    ]) {
      const result = await hmm(world, args)
      expect(result.exitCode).toBe(1)
      expect(said(result.stderr)).toEqual([
        `hmm: workspace ${ws.label} does not apply to ${world.origin}`,
        "hmm: affected file 'data/evil' is beyond a symbolic link",
      ])
      expect(readdirSync(outside)).toEqual([])
      expect(snapshot(world.origin)).toEqual(before)
    }
  })

  it('with --3way and nothing in the way applies as plain apply does', async () => {
    world = new World('apply-3way-clean')
    await world.gitRepo()
    const ws = await made(world, 'echo more >> README.md && echo c > c.txt')
    expect(await hmm(world, ['apply', '--3way'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nuncommitted\nmore\n')
    expect(readFileSync(join(world.origin, 'c.txt'), 'utf8')).toBe('c\n')
  })

  it('after hmm merge takes only what the merge did not: the changes the workspace did not commit', async () => {
    world = new World('apply-after-merge')
    await world.gitRepo()
    const ws = await made(world, 'echo c > c.txt && git add c.txt && git commit -qm c && echo more >> README.md && echo u > u.txt', 'am')
    expect((await hmm(world, ['merge', 'am'])).exitCode).toBe(0)
    expect(await hmm(world, ['apply', 'am'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'c.txt'), 'utf8')).toBe('c\n')
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nuncommitted\nmore\n')
    expect(readFileSync(join(world.origin, 'u.txt'), 'utf8')).toBe('u\n')
    expect(await world.git(['status', '--porcelain'])).toBe(' M README.md\n?? notes.txt\n?? u.txt')
    expect(await hmm(world, ['apply', 'am'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: workspace ${ws.label} is already applied to ${world.origin}\n`})
    expect(await hmm(world, ['rm', 'am'])).toMatchObject({exitCode: 0, stderr: `hmm: removed workspace ${ws.label}\n`})
  })

  it('says a workspace is already applied, and one that changed nothing (exit 0)', async () => {
    world = new World('apply-again')
    await world.gitRepo()
    const ws = await made(world, 'echo more >> README.md && echo n > n.txt && rm notes.txt')
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    const before = snapshot(world.origin)
    expect(await hmm(world, ['apply'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: workspace ${ws.label} is already applied to ${world.origin}\n`})
    expect(snapshot(world.origin)).toEqual(before)
    const idle = await made(world, 'true')
    expect(await hmm(world, ['apply'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: workspace ${idle.label} changed nothing\n`})
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('with paths under which the workspace changed nothing (mistyped), says so and exits 1: not "already applied"', async () => {
    world = new World('apply-nothing-under')
    await world.gitRepo()
    const ws = await made(world, 'echo more >> README.md')
    expect(await hmm(world, ['apply', ws.id, '--', 'READNE.md'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${ws.label} changed nothing under READNE.md\n`,
    })
    expect((await hmm(world, ['apply', ws.id, '--', 'README.md'])).exitCode).toBe(0)
    expect(await hmm(world, ['apply', ws.id, '--', 'README.md'])).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: workspace ${ws.label} is already applied to ${world.origin} (README.md)\n`,
    })
  })

  it('applies binary files byte for byte', async () => {
    world = new World('apply-binary')
    await world.gitRepo()
    const old = randomBytes(50_000)
    world.file('data/old.bin', old)
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'binary'])
    const fresh = randomBytes(70_000)
    world.write(join(world.root, 'fresh.bin'), fresh)
    const changed = Buffer.concat([old.subarray(0, 20_000), randomBytes(100), old.subarray(20_000)])
    world.write(join(world.root, 'changed.bin'), changed)
    // The sandboxed command may read files outside the home, not write them.
    await made(
      world,
      `cp '${world.root}/fresh.bin' data/fresh.bin && cp '${world.root}/changed.bin' data/old.bin && printf '\\0\\r\\n\\377' > data/tiny.bin && git add -A && git commit -qm bins`,
    )
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'data/fresh.bin')).equals(fresh)).toBe(true)
    expect(readFileSync(join(world.origin, 'data/old.bin')).equals(changed)).toBe(true)
    expect(readFileSync(join(world.origin, 'data/tiny.bin')).equals(Buffer.from([0, 13, 10, 255]))).toBe(true)
  })

  it('applies files with spaces, newlines, leading dashes and non-ASCII in their names, links and modes', async () => {
    world = new World('apply-names')
    await world.gitRepo()
    world.file('-old dash', 'x\n')
    world.file('ünï code.txt', 'before\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'names'])
    await made(
      world,
      [
        "echo a > 'with space.txt'",
        `echo b > "$(printf 'new\\nline')"`,
        'echo c > ./--looks-like-a-flag',
        'rm ./-old\\ dash',
        "echo after > 'ünï code.txt'",
        'mkdir -p "dir é" && echo d > "dir é/中文.txt"',
        'ln -s README.md link',
        'printf "#!/bin/sh\\n" > run.sh && chmod +x run.sh',
      ].join(' && '),
    )
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    const at = (rel: string) => join(world.origin, rel)
    expect(readFileSync(at('with space.txt'), 'utf8')).toBe('a\n')
    expect(readFileSync(at('new\nline'), 'utf8')).toBe('b\n')
    expect(readFileSync(at('--looks-like-a-flag'), 'utf8')).toBe('c\n')
    expect(existsSync(at('-old dash'))).toBe(false)
    expect(readFileSync(at('ünï code.txt'), 'utf8')).toBe('after\n')
    expect(readFileSync(at('dir é/中文.txt'), 'utf8')).toBe('d\n')
    expect(readlinkSync(at('link'))).toBe('README.md')
    expect(lstatSync(at('run.sh')).mode & 0o111).not.toBe(0)
  })

  it('works for an origin that is not a repository', async () => {
    world = new World('apply-plain')
    world.file('change.txt', 'before\n')
    world.file('delete.txt', 'x\n')
    const ws = await made(world, 'echo after > change.txt && rm delete.txt && mkdir -p d && echo n > d/new.txt')
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'change.txt'), 'utf8')).toBe('after\n')
    expect(existsSync(join(world.origin, 'delete.txt'))).toBe(false)
    expect(readFileSync(join(world.origin, 'd/new.txt'), 'utf8')).toBe('n\n')
  })

  it("run in a subdirectory of a repository, works on the repository's top, with paths relative to it", async () => {
    world = new World('apply-subdir')
    const repo = join(world.home, 'src')
    await world.git(['init', '-q'], repo)
    world.file('inner.txt', 'inner\n')
    world.write(join(repo, 'outer.txt'), 'outer\n')
    await world.git(['add', '-A'], repo)
    await world.git(['commit', '-qm', 'first'], repo)
    const ws = await made(world, 'echo changed > inner.txt && echo new > new.txt')
    const diff = await hmm(world, ['diff'])
    expect(diff.stdout).toContain('diff --git a/proj/inner.txt b/proj/inner.txt\n')
    expect(diff.stdout).toContain('diff --git a/proj/new.txt b/proj/new.txt\n')
    const index = readFileSync(join(repo, '.git', 'index'))
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${repo}\n`})
    expect(readFileSync(join(world.origin, 'inner.txt'), 'utf8')).toBe('changed\n')
    expect(readFileSync(join(world.origin, 'new.txt'), 'utf8')).toBe('new\n')
    expect(existsSync(join(repo, 'new.txt'))).toBe(false)
    expect(readFileSync(join(repo, '.git', 'index')).equals(index)).toBe(true)
  })

  it('works for a repository with no commits yet', async () => {
    world = new World('apply-unborn')
    await world.git(['init', '-q'])
    world.file('a.txt', 'a\n')
    const ws = await made(world, 'echo b >> a.txt && echo c > c.txt && git add -A && git commit -qm first')
    expect((await hmm(world, ['diff', '--stat'])).stdout).toBe(' a.txt | 1 +\n c.txt | 1 +\n 2 files changed, 2 insertions(+)\n')
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'a.txt'), 'utf8')).toBe('a\nb\n')
    expect(await world.git(['status', '--porcelain'])).toBe('?? a.txt\n?? c.txt'.trim())
  })

  it('after hmm diff --stat, says that a stat does not count as looking at the changes, and what does', async () => {
    world = new World('apply-shown-stat')
    await world.gitRepo()
    const ws = await made(world, 'echo one >> README.md', 'st')
    expect((await hmm(world, ['diff', 'st'])).stdout).toContain('+one\n')
    await world.hmm(['exec', 'st', 'sh', '-c', 'echo two >> README.md'])
    expect((await hmm(world, ['diff', '--stat', 'st'])).stdout).toContain('README.md')
    const before = snapshot(world.origin)
    expect(await hmm(world, ['apply', 'st'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${ws.label} changed since hmm diff showed it; hmm diff --stat shows no content, so it does not count (hmm diff ${ws.id} shows it as it is now)\n`,
    })
    expect(snapshot(world.origin)).toEqual(before)
    // Looked at in full: taken.
    expect((await hmm(world, ['diff', 'st'])).stdout).toContain('+two\n')
    expect((await hmm(world, ['apply', 'st'])).exitCode).toBe(0)
  })

  it('after hmm diff -- PATH, takes only what some diff showed: a change elsewhere since is refused, by apply and by merge', async () => {
    world = new World('apply-shown-paths')
    await world.gitRepo()
    const ws = await made(world, 'echo one >> src/main.c && echo one > docs.md && git add src/main.c docs.md && git commit -qm one', 'sp')
    const part = await made(world, 'echo three > other.md && echo three >> notes.txt', 'pt')
    expect((await hmm(world, ['diff', 'sp'])).stdout).toContain('+one\n')
    // After the full diff: a commit the user did not see, outside the path they look at next.
    await world.hmm(['exec', 'sp', 'sh', '-c', 'echo unseen >> src/main.c && echo two >> docs.md && git commit -qm two src/main.c docs.md'])
    expect((await hmm(world, ['diff', 'sp', '--', 'docs.md'])).stdout).not.toContain('unseen')
    const before = snapshot(world.origin)
    const changedSince = ({label, id}: {label: string; id: string}) =>
      `hmm: workspace ${label} changed since hmm diff showed it, or was shown only in part (hmm diff ${id} shows all of it as it is now)\n`
    expect(await hmm(world, ['apply', 'sp'])).toEqual({exitCode: 1, stdout: '', stderr: changedSince(ws)})
    expect(await taking(world, ['merge', 'sp'])).toEqual({exitCode: 1, stdout: '', stderr: changedSince(ws)})
    // Never looked at in full, seen under one path only: the rest was not shown either.
    expect((await hmm(world, ['diff', 'pt', '--', 'other.md'])).exitCode).toBe(0)
    expect(await hmm(world, ['apply', 'pt'])).toEqual({exitCode: 1, stdout: '', stderr: changedSince(part)})
    expect(snapshot(world.origin)).toEqual(before)
    // What was shown under a path is taken under it; a change there since is not.
    expect((await hmm(world, ['apply', 'pt', '--', 'other.md'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'other.md'), 'utf8')).toBe('three\n')
    expect((await hmm(world, ['diff', 'pt', '--', 'notes.txt'])).stdout).toContain('+three\n')
    await world.hmm(['exec', 'pt', 'sh', '-c', 'echo sneaky >> notes.txt'])
    expect(await hmm(world, ['apply', 'pt', '--', 'notes.txt'])).toEqual({exitCode: 1, stdout: '', stderr: changedSince(part)})
    // Each part looked at: all of it is taken.
    expect((await hmm(world, ['diff', 'pt', '--', 'notes.txt'])).stdout).toContain('+sneaky\n')
    expect((await hmm(world, ['apply', 'pt'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'notes.txt'), 'utf8')).toBe('untracked\nthree\nsneaky\n')
    expect((await hmm(world, ['diff', 'sp'])).stdout).toContain('+unseen\n')
    const merged = await taking(world, ['merge', 'sp'])
    expect(merged.exitCode, merged.stderr).toBe(0)
    expect(readFileSync(join(world.origin, 'src', 'main.c'), 'utf8')).toContain('unseen\n')
  })

  it('refuses a running workspace', async () => {
    world = new World('apply-running')
    const go = join(world.root, 'go')
    const started = world.start(['run', '-n', 'busy', 'sh', '-c', `echo x > x.txt; echo ready; while [ ! -e '${go}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const result = await hmm(world, ['apply', 'busy'])
    writeFileSync(go, '')
    await started.result()
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: workspace ([0-9a-z]{6}) \(busy\) is running \(hmm stop \1 ends it\)\n$/)
    expect(existsSync(join(world.origin, 'x.txt'))).toBe(false)
  })

  it("refuses, as merge does, what changed after hmm diff showed it while a process of the workspace ran (rewritten in hmm stop's grace)", async () => {
    // The attacker's review 3, finding F4: the command leaves a process that rewrites the file when hmm stop signals it.
    world = new World('apply-shown')
    await world.gitRepo()
    const left = 'trap \'printf "evil\\n" > app.py; git commit -qm Evil app.py; exit 0\' TERM; : > /tmp/ready; while :; do sleep 0.1; done'
    const ws = await made(
      world,
      [
        'printf "x = 2\\n" > app.py && git add app.py && git commit -qm "Fix x"',
        `setsid sh -c '${left.replace(/'/g, "'\\''")}' </dev/null >/dev/null 2>&1 &`,
        'while [ ! -e /tmp/ready ]; do sleep 0.01; done',
      ].join('\n'),
      'left',
    )
    expect((await hmm(world, ['diff', 'left'])).stdout).toContain('+x = 2\n')
    expect(await hmm(world, ['stop', 'left'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: stopped workspace ${ws.label}\n`})
    const before = snapshot(world.origin)
    const changed = `hmm: workspace ${ws.label} changed since hmm diff showed it, or was shown only in part (hmm diff ${ws.id} shows all of it as it is now)\n`
    for (const command of ['apply', 'merge']) expect(await taking(world, [command, 'left'])).toEqual({exitCode: 1, stdout: '', stderr: changed})
    expect(snapshot(world.origin)).toEqual(before)
    // Shown now that nothing runs there: taken.
    expect((await hmm(world, ['diff', 'left'])).stdout).toContain('+evil\n')
    expect(await hmm(world, ['apply', 'left'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'app.py'), 'utf8')).toBe('evil\n')
  })

  it('refuses, as merge does, what changed after hmm diff or hmm log -p showed it though nothing of the workspace seemed to run (landlock-only, its keeper killed)', async () => {
    // The attacker's review 8, F5: without the namespaces hmm cannot know that nothing of the command lives.
    world = new World('apply-shown-unseen')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    await world.gitRepo()
    const [go, token] = [join(world.root, 'go'), `hmm-shown-${randomBytes(4).toString('hex')}`]
    // It ends with the world too: a test that fails before it is killed leaves nothing waiting.
    const left = `# ${token}\nwhile [ ! -e '${go}' ]; do [ -d '${world.root}' ] || exit; sleep 0.05; done; printf "evil\\n" >> app.py; git commit -qm Evil app.py; : > .git/done`
    const ws = await made(
      world,
      [
        'printf "x = 2\\n" > app.py && git add app.py && git commit -qm "Fix x"',
        `setsid sh -c '${left.replace(/'/g, "'\\''")}' </dev/null >/dev/null 2>&1 &`,
      ].join('\n'),
      'left',
    )
    // What the command left is the keeper's (native-helpers/keeper.c) until that is killed: then hmm no longer sees it.
    const pid = Number((await execa('pgrep', ['-f', `^sh -c # ${token}`])).stdout)
    onTestFinished(() => {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    })
    const keeper = /^PPid:\t(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))![1]
    expect(readFileSync(`/proc/${keeper}/cmdline`, 'latin1')).toContain('hmm-helper')
    process.kill(Number(keeper), 'SIGKILL')
    while (!(await hmm(world, ['ls'])).stdout.includes(' done ')) await new Promise(resolve => setTimeout(resolve, 50))
    expect((await hmm(world, ['log', '-p', 'left'])).stdout).toContain('+x = 2\n')
    expect((await hmm(world, ['diff', 'left'])).stdout).toContain('+x = 2\n')
    writeFileSync(go, '')
    await whenWritten(join(ws.tree, '.git', 'done'))
    const before = snapshot(world.origin)
    const changed = (command: string) =>
      command === 'diff'
        ? `hmm: workspace ${ws.label} changed since hmm diff showed it, or was shown only in part (hmm diff ${ws.id} shows all of it as it is now)\n`
        : `hmm: workspace ${ws.label} changed since hmm ${command} showed it (hmm ${command} ${ws.id} shows it as it is now)\n`
    expect(await hmm(world, ['apply', 'left'])).toEqual({exitCode: 1, stdout: '', stderr: changed('diff')})
    expect(await taking(world, ['merge', 'left'])).toEqual({exitCode: 1, stdout: '', stderr: changed('log -p')})
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("writes nothing where git would write other bytes than hmm diff shows: paths the origin's attributes convert (working-tree-encoding)", async () => {
    // The attacker's review 3, finding F7: as UTF-16LE text git keeps (and hmm diff shows) notes.sh as CJK characters;
    // git apply wrote it back through the origin's attribute, as the shell script the command wrote.
    world = new World('apply-converted')
    await world.gitRepo()
    world.file('.gitattributes', '*.sh working-tree-encoding=UTF-16LE\n')
    await world.git(['add', '.gitattributes'])
    await world.git(['commit', '-qm', 'attributes'])
    const ws = await made(world, 'printf "#!/bin/sh\\necho PWNED\\n\\n" > notes.sh && echo fine > fine.txt')
    expect((await hmm(world, ['diff'])).stdout).not.toContain('PWNED')
    const before = snapshot(world.origin)
    const refused = `hmm: workspace ${ws.label} changes files that git would write converted (by a filter, working-tree-encoding, ident or line ends), not as hmm diff shows them: notes.sh\n`
    for (const args of [['apply'], ['apply', '--check'], ['apply', '--3way']])
      expect(await hmm(world, args)).toEqual({exitCode: 1, stdout: '', stderr: refused})
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("takes a change to a file under the origin's filter (git-lfs's kind) as the bytes hmm diff shows, from the bytes the origin's file holds", async () => {
    // Such a file's bytes are not what git keeps of it (git-lfs keeps a pointer): the patch started from what git keeps,
    // and git apply found the origin's file did not match it ('does not apply').
    world = new World('apply-filtered')
    await world.gitRepo()
    await world.git(['config', 'filter.upper.clean', 'tr a-z A-Z'])
    await world.git(['config', 'filter.upper.smudge', 'cat'])
    await world.git(['config', 'filter.upper.required', 'true'])
    world.file('.gitattributes', '*.up filter=upper\n')
    world.file('notes.up', 'hello\n')
    await world.git(['add', '.gitattributes', 'notes.up'])
    await world.git(['commit', '-qm', 'filtered'])
    const ws = await made(world, 'printf "hello\\nworld\\n" > notes.up')
    expect((await hmm(world, ['diff'])).stdout).toContain('@@ -1 +1,2 @@\n hello\n+world\n')
    expect(await hmm(world, ['apply'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'notes.up'), 'utf8')).toBe('hello\nworld\n')
  })

  it('writes nothing converted by the attributes the change itself brings (ident); takes line ends as git writes them', async () => {
    world = new World('apply-brings-attributes')
    await world.gitRepo()
    const ident = await made(world, 'printf "*.c ident\\n" > .gitattributes && echo "/* \\$Id\\$ */" >> src/main.c')
    const before = snapshot(world.origin)
    expect(await hmm(world, ['apply'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${ident.label} changes files that git would write converted (by a filter, working-tree-encoding, ident or line ends), not as hmm diff shows them: src/main.c\n`,
    })
    expect(snapshot(world.origin)).toEqual(before)
    await hmm(world, ['rm', '-f', ident.id])

    // The new user's review 23, finding 2: in a project with `*.bat text eol=crlf`, a .bat file edited and one added.
    world.file('.gitattributes', '*.bat text eol=crlf\n')
    world.file('run.bat', 'echo one\r\n')
    await world.git(['add', '.gitattributes', 'run.bat'])
    await world.git(['commit', '-qm', 'attributes'])
    const edits = await made(world, 'printf "echo one\\r\\necho two\\r\\n" > run.bat && printf "echo new\\r\\n" > new.bat')
    expect(await hmm(world, ['apply', edits.id])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: applied workspace ${edits.label} to ${world.origin}\n`})
    expect(readFileSync(join(world.origin, 'new.bat'), 'utf8')).toBe('echo new\r\n')
    expect(readFileSync(join(world.origin, 'run.bat'), 'utf8')).toBe('echo one\r\necho two\r\n')
  })

  it('records what it applied, so rm removes the workspace without -f', async () => {
    world = new World('apply-rm')
    await world.gitRepo()
    const ws = await made(world, 'echo more >> README.md && git commit -qam wip')
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect((await hmm(world, ['apply', '--check'])).exitCode).toBe(0)
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    expect(await hmm(world, ['rm', ws.id])).toMatchObject({exitCode: 0, stderr: `hmm: removed workspace ${ws.id}\n`})
  })

  it("never turns a tree deleted by hand into deleting the origin's files", async () => {
    world = new World('apply-gone')
    world.file('a.txt', 'a\n')
    mkdirSync(join(world.origin, 'dir'))
    world.file('dir/b.txt', 'b\n')
    const ws = await made(world, 'echo c > c.txt')
    rmSync(ws.tree, {recursive: true, force: true})
    const before = snapshot(world.origin)
    for (const args of [['apply'], ['apply', '--check'], ['diff']]) {
      expect(await hmm(world, args)).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: workspace ${ws.label} has no tree any more (${ws.tree} is gone); hmm rm removes it\n`,
      })
    }
    expect(snapshot(world.origin)).toEqual(before)
    // Emptied by the command itself, it is a real change, shown and applied as such.
    const emptied = await made(world, 'rm -rf ./* && echo only > only.txt')
    expect((await hmm(world, ['diff', '--stat', emptied.id])).stdout).toContain('3 files changed')
  })
})
