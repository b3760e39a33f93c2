// WORK (SPEC `hmm ls`): what each workspace holds, recorded when a command
// exits and when diff, apply, merge and pr look; the last line of run and
// exec ends with it; `ls -l` adds SIZE. Listing never reads a tree.
import {execa} from 'execa'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, READERS_SLOWER, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

interface Listed {
  id: string
  state: string
  commits: number | null
  files: number | null
  taken: string | null
}

async function listed(id: string): Promise<Listed | undefined> {
  return (JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Listed[]).find(entry => entry.id === id)
}

/** The WORK cell of the workspace's row in `hmm ls`. */
async function workCell(id: string, args: string[] = ['ls']): Promise<string> {
  const lines = (await world.hmm(args)).stdout.split('\n')
  const header = lines[0]
  const row = lines.find(line => line.startsWith(id))!
  return row.slice(header.indexOf('WORK'), header.indexOf(args.includes('-l') ? 'SIZE' : 'ORIGIN')).trim()
}

/** The SIZE cell of the workspace's row in `hmm ls -l`, in bytes (as closely as it shows them). */
async function sizeOf(id: string): Promise<number> {
  const lines = (await world.hmm(['ls', '-l'])).stdout.split('\n')
  const header = lines[0]
  const cell = lines
    .find(line => line.startsWith(id))!
    .slice(header.indexOf('WORK'), header.indexOf('EXIT'))
    .trim()
    .split(/ +/)
    .at(-1)!
  const [, value, unit] = /^([\d.]+)([KMGT]?)$/.exec(cell)!
  return Number(value) * 1024 ** ' KMGT'.indexOf(unit || ' ')
}

function lastLine(stderr: string): string {
  return stderr.trimEnd().split('\n').at(-1)!
}

describe('WORK', () => {
  it('counts files changed, commits made, and nothing as -, in ls, --json and the last line of run and exec', async () => {
    world = new World('work-counts')
    await world.gitRepo()
    const nothing = await world.hmm(['run', '-n', 'p', 'true'])
    const ws = workspaceLine(nothing.stderr)
    expect(lastLine(nothing.stderr)).toBe(`hmm: workspace ${ws.id} (p): ${ws.tree} (-)`)
    expect(await workCell(ws.id)).toBe('-')
    expect(await listed(ws.id)).toMatchObject({commits: 0, files: 0, taken: null})

    const files = await world.hmm(['exec', 'p', 'sh', '-c', 'echo new > new.txt; echo more >> README.md'])
    expect(lastLine(files.stderr)).toBe(`hmm: workspace ${ws.id} (p): ${ws.tree} (2 files)`)
    expect(await workCell(ws.id)).toBe('2 files')

    const commits = await world.hmm([
      'exec',
      'p',
      'sh',
      '-c',
      'git add -A && git commit -qm one && echo x > a && git add a && git commit -qm two && echo y > b',
    ])
    expect(commits.exitCode, commits.stderr).toBe(0)
    expect(lastLine(commits.stderr)).toMatch(/ \(2 commits, 1 file\)$/)
    expect(await listed(ws.id)).toMatchObject({commits: 2, files: 1, taken: null})
  })

  it('counts a renamed file once, as git diff --stat -M does, committed or not, in a repository or not', async () => {
    world = new World('work-renames')
    await world.gitRepo()
    world.file('long.txt', 'line\n'.repeat(40))
    await world.git(['add', 'long.txt'])
    await world.git(['commit', '-qm', 'long'])
    const moved = await world.hmm(['run', '-n', 'p', 'sh', '-c', 'git mv src/main.c src/app.c && mv long.txt longer.txt && echo more >> longer.txt'])
    expect(lastLine(moved.stderr)).toMatch(/ \(2 files\)$/)
    const committed = await world.hmm(['exec', 'p', 'sh', '-c', 'git add -A src longer.txt long.txt && git commit -qm renames && git mv src/app.c src/main.c'])
    expect(lastLine(committed.stderr)).toMatch(/ \(1 commit, 1 file\)$/)
    expect(await workCell(workspaceLine(moved.stderr).id)).toBe('1 commit, 1 file')

    const plain = new World('work-renames-plain')
    try {
      plain.file('a.txt', 'a\n')
      const result = await plain.hmm(['run', 'mv', 'a.txt', 'b.txt'])
      expect(lastLine(result.stderr)).toMatch(/ \(1 file\)$/)
      // Telling a rename with changes from a deletion and an addition reads what the deleted files held.
      plain.file('long.txt', 'line\n'.repeat(40))
      plain.file('gone.txt', 'gone\n')
      const changed = await plain.hmm(['run', 'sh', '-c', 'mv long.txt longer.txt && echo more >> longer.txt && rm gone.txt && echo new > new.txt'])
      expect(lastLine(changed.stderr)).toMatch(/ \(3 files\)$/)
    } finally {
      plain.dispose()
    }
  })

  it.skipIf(READERS_SLOWER !== undefined)(
    `is counted when the command exits with git confined once, and once more to take commits out${READERS_SLOWER ? ` (skipped: ${READERS_SLOWER})` : ''}`,
    async () => {
      world = new World('work-confined')
      await world.gitRepo()
      // Each confined start pays the sandbox's set-up (namespaces, Landlock): HMM_DEBUG names each.
      world.env.HMM_DEBUG = '1'
      const starts = (stderr: string) => stderr.split('\n').filter(line => line.startsWith('hmm: debug: confined: ')).length
      const files = await world.hmm(['run', '-n', 'c', 'sh', '-c', 'echo more >> README.md && echo new > new.txt'])
      expect(lastLine(files.stderr)).toMatch(/ \(2 files\)$/)
      expect(starts(files.stderr)).toBe(1)
      // One line each, as hmm's: the command run confined is printed on one.
      expect(files.stderr.split('\n').filter(line => line !== '' && !line.startsWith('hmm: '))).toEqual([])
      const commits = await world.hmm(['exec', 'c', 'sh', '-c', 'git add -A && git commit -qm one'])
      expect(lastLine(commits.stderr)).toMatch(/ \(1 commit\)$/)
      expect(starts(commits.stderr)).toBe(2)
    },
  )

  it('says merged or applied once taken back in that state, and counts again after more work', async () => {
    world = new World('work-taken')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean start'])
    const made = await world.hmm(['run', '-n', 'm', 'sh', '-c', 'echo change >> README.md && git commit -qam work'])
    const merging = workspaceLine(made.stderr)
    expect(await workCell(merging.id)).toBe('1 commit')
    expect((await world.hmm(['merge', 'm'])).exitCode).toBe(0)
    expect(await workCell(merging.id)).toBe('merged')
    expect(await listed(merging.id)).toMatchObject({taken: 'merged'})

    const other = workspaceLine((await world.hmm(['run', '-n', 'a', 'sh', '-c', 'echo applied > applied.txt'])).stderr)
    expect((await world.hmm(['apply', 'a'])).exitCode).toBe(0)
    expect(await workCell(other.id)).toBe('applied')
    await world.hmm(['exec', 'a', 'sh', '-c', 'echo again > again.txt'])
    expect(await workCell(other.id)).toBe('1 file')
  })

  it('says merged once the user resolved a merge that stopped at conflicts and committed, not before, not if given up', async () => {
    world = new World('work-resolved')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean start'])
    // Subjects of their own: the same change made in the same second would be the same commit in both.
    const conflicting = (subject: string) => `echo workspace > src/main.c && git commit -qam ${subject}`
    const resolved = workspaceLine((await world.hmm(['run', '-n', 'r', 'sh', '-c', `${conflicting('r')} && echo loose > loose.txt`])).stderr)
    const abandoned = workspaceLine((await world.hmm(['run', '-n', 'g', 'sh', '-c', conflicting('g')])).stderr)
    world.file('src/main.c', 'origin\n')
    await world.git(['commit', '-qam', 'origin'])

    expect((await world.hmm(['merge', 'g'])).exitCode).toBe(1)
    await world.git(['merge', '--abort'])
    expect((await world.hmm(['merge', 'r'])).exitCode).toBe(1)
    // Stopped at conflicts: not merged yet.
    expect(await workCell(resolved.id)).toBe('1 commit, 1 file')
    world.file('src/main.c', 'both\n')
    await world.git(['commit', '-qam', 'resolved'])
    // Its commit is in the branch now; what it did not commit is still its own.
    expect(await workCell(resolved.id)).toBe('1 file')
    expect(await listed(resolved.id)).toMatchObject({commits: 0, files: 1})
    expect(await workCell(abandoned.id)).toBe('1 commit')
    // Once its loose file is gone, nothing is left to take: merged.
    await world.hmm(['exec', 'r', 'rm', 'loose.txt'])
    expect(await workCell(resolved.id)).toBe('merged')
  }, 180_000) // a dozen hmm commands: past a minute on a loaded machine

  it('is ? while running, and listing does not read the tree', async () => {
    world = new World('work-unknown')
    const marker = join(world.root, 'finish')
    const child = execa(process.execPath, [BIN, 'run', 'sh', '-c', `echo ready; while [ ! -e '${marker}' ]; do sleep 0.05; done`], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
      reject: false,
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    await new Promise<void>(resolve => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()))
    const ws = workspaceLine(stderr)
    expect(await workCell(ws.id)).toBe('?')
    expect(await listed(ws.id)).toMatchObject({state: 'running', commits: null, files: null, taken: null})
    await world.sh(`touch '${marker}'`)
    await child
    expect(await workCell(ws.id)).toBe('-')
    // Changed behind hmm's back: ls shows what was recorded, diff looks and records.
    writeFileSync(join(ws.tree, 'behind.txt'), 'x\n')
    expect(await workCell(ws.id)).toBe('-')
    await world.hmm(['diff', ws.id])
    expect(await workCell(ws.id)).toBe('1 file')
  })

  it('shows SIZE with -l: the disk space the workspace takes', async () => {
    world = new World('work-size')
    await world.gitRepo()
    world.file('big.bin', Buffer.alloc(300 * 1024, 1))
    const ws = workspaceLine((await world.hmm(['run', 'true'])).stderr)
    const long = (await world.hmm(['ls', '-l'])).stdout.split('\n')
    expect(long[0]).toMatch(/^ID +NAME +STATE +AGE +WORK +SIZE +EXIT +ORIGIN$/)
    expect(await workCell(ws.id, ['ls', '-l'])).toBe('-')
    expect((await world.hmm(['ls'])).stdout).not.toContain('SIZE')
    // A full copy (300K, the repository, what hmm keeps beside it) where the file system cannot share blocks; where it
    // does, what hmm keeps beside the clone only.
    const reflinks = (await execa('cp', ['--reflink=always', join(world.origin, 'big.bin'), join(world.home, 'probe')], {reject: false})).exitCode === 0
    expect(await sizeOf(ws.id)).toBeGreaterThan(reflinks ? 0 : 300 * 1024)
  })

  it('counts in SIZE what the command wrote to its /tmp and its caches, kept until hmm rm', async () => {
    world = new World('work-size-written')
    await world.gitRepo()
    mkdirSync(join(world.home, '.cache'))
    const ws = workspaceLine((await world.hmm(['run', '-n', 's', 'true'])).stderr)
    const size = () => sizeOf(ws.id)
    const made = await size()
    const MiB = 1024 * 1024
    // Random bytes: no file system compresses or shares them.
    await world.hmm(['exec', 's', 'sh', '-c', 'head -c 20971520 /dev/urandom > /tmp/big'])
    const withTmp = await size()
    expect(withTmp - made).toBeGreaterThan(19 * MiB)
    expect(withTmp - made).toBeLessThan(22 * MiB)
    await world.hmm(['exec', 's', 'sh', '-c', 'head -c 20971520 /dev/urandom > ~/.cache/big'])
    expect(existsSync(join(world.home, '.cache', 'big'))).toBe(false)
    const withCache = await size()
    expect(withCache - withTmp).toBeGreaterThan(19 * MiB)
    expect(withCache - withTmp).toBeLessThan(22 * MiB)
    expect((await world.hmm(['rm', '-f', ws.id])).exitCode).toBe(0)
    expect(existsSync(join(world.dataDir, ws.id))).toBe(false)
  })

  it('says on a terminal, once, that the workspace is a full copy where the file system cannot copy-on-write', async () => {
    world = new World('work-cow')
    await world.gitRepo()
    world.file('big.bin', Buffer.alloc(300 * 1024, 1))
    const reflinks = (await execa('cp', ['--reflink=always', join(world.origin, 'big.bin'), join(world.home, 'probe')], {reject: false})).exitCode === 0
    const notTerminal = await world.hmm(['run', 'true'])
    expect(notTerminal.stderr).not.toContain('copy-on-write')
    const onTerminal = async () =>
      String(
        (await execa('script', ['-qfec', `'${process.execPath}' '${BIN}' run true`, '/dev/null'], {cwd: world.origin, env: world.env, extendEnv: false}))
          .stdout,
      )
    const first = await onTerminal()
    const notice = /hmm: no copy-on-write on this file system: the workspace is a full copy \(3\d\d KB\)/
    if (reflinks) expect(first).not.toContain('copy-on-write')
    else expect(first).toMatch(notice)
    expect(await onTerminal()).not.toContain('copy-on-write')
  })
})

// SPEC `hmm apply` › State: WORK, log, merge, apply and rm agree on what is left to take.
describe('one state', () => {
  it('counts a commit merged earlier once, and calls applied what apply says is already applied', async () => {
    world = new World('state-merged-applied')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean start'])
    const ws = workspaceLine(
      (
        await world.hmm([
          'run',
          '-n',
          'x',
          'sh',
          '-c',
          'echo new > new.txt && git add new.txt && git commit -qm took-one && echo a >> README.md && echo b >> src/main.c',
        ])
      ).stderr,
    )
    expect((await world.hmm(['merge', 'x'])).exitCode).toBe(0)
    expect(await workCell(ws.id)).toBe('2 files')
    expect((await world.hmm(['apply', 'x'])).exitCode).toBe(0)
    expect(await workCell(ws.id)).toBe('applied')
    // The agent commits what was already applied: nothing new reaches the origin's files.
    await world.hmm(['exec', 'x', 'git', 'commit', '-qam', 'took-two'])
    expect((await world.hmm(['log', 'x'])).stdout).toMatch(/^[0-9a-f]+ took-two\n$/)
    expect((await world.hmm(['apply', '--check', 'x'])).stderr).toBe(`hmm: workspace ${ws.id} (x) is already applied to ${world.origin}\n`)
    expect(await workCell(ws.id)).toBe('applied')
    expect((await world.hmm(['rm', 'x'])).exitCode).toBe(0)
  }, 120_000)

  it('counts as taken what an apply took when a merge of some of it follows', async () => {
    world = new World('state-applied-merged')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean start'])
    const ws = workspaceLine((await world.hmm(['run', '-n', 'x', 'sh', '-c', 'echo b >> src/main.c && echo n > n.txt'])).stderr)
    expect((await world.hmm(['apply', 'x'])).exitCode).toBe(0)
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'took the workspace'])
    // The agent commits part of what was applied; the merge brings that commit.
    await world.hmm(['exec', 'x', 'git', 'commit', '-qm', 'main', 'src/main.c'])
    expect((await world.hmm(['merge', 'x'])).exitCode).toBe(0)
    expect((await world.hmm(['apply', '--check', 'x'])).stderr).toBe(`hmm: workspace ${ws.id} (x) is already applied to ${world.origin}\n`)
    expect(await workCell(ws.id)).toBe('merged')
    expect((await world.hmm(['rm', 'x'])).exitCode).toBe(0)
  }, 120_000)

  it('applies after an apply only what changed since', async () => {
    world = new World('state-applied-twice')
    await world.gitRepo()
    await world.git(['commit', '-qam', 'clean start'])
    const ws = workspaceLine((await world.hmm(['run', '-n', 'x', 'sh', '-c', 'echo a >> README.md'])).stderr)
    expect((await world.hmm(['apply', 'x'])).exitCode).toBe(0)
    await world.hmm(['exec', 'x', 'sh', '-c', 'echo b >> src/main.c'])
    expect(await workCell(ws.id)).toBe('1 file')
    const again = await world.hmm(['apply', 'x'])
    expect(again.stderr).toBe(`hmm: applied workspace ${ws.id} (x) to ${world.origin}\n`)
    expect(await world.git(['status', '--short', '--untracked-files=no'])).toBe(' M README.md\n M src/main.c')
    expect(await workCell(ws.id)).toBe('applied')
    expect((await world.hmm(['rm', 'x'])).exitCode).toBe(0)
  }, 120_000)
})
