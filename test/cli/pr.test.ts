// `hmm pr`, line by line of SPEC: a bare repository as the remote, made to
// look like GitHub with url.<bare>.insteadOf, and a fake `gh` first on PATH
// that records its arguments (`pr view` fails until `pr create` ran).
import Database from 'better-sqlite3'
import {execa} from 'execa'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const PR_URL = 'https://github.com/owner/name/pull/7'
const FAKE_GH = `#!/bin/sh
calls="$HOME/gh-calls"
mkdir -p "$calls"
n=$(ls "$calls" | wc -l)
printf '%s\\0' "$@" > "$calls/$n"
case "$1 $2" in
  "pr view")
    if [ -e "$HOME/gh-created" ]; then echo "${PR_URL}"; exit 0; fi
    echo 'no pull requests found for branch' >&2; exit 1 ;;
  "pr create")
    touch "$HOME/gh-created"; echo "${PR_URL}"; exit 0 ;;
esac
exit 2
`

/** The arguments of each call of the fake gh, in order. */
function ghCalls(): string[][] {
  const dir = join(world.home, 'gh-calls')
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .sort((a, b) => Number(a) - Number(b))
    .map(name => readFileSync(join(dir, name), 'utf8').split('\0').slice(0, -1))
}

function installGh(): void {
  const bin = join(world.home, 'bin')
  mkdirSync(bin, {recursive: true})
  writeFileSync(join(bin, 'gh'), FAKE_GH)
  chmodSync(join(bin, 'gh'), 0o755)
  world.env.PATH = `${bin}:${world.env.PATH}`
}

/**
 * A repository whose main tracks `<remote>/main`, a bare repository that
 * looks like github.com/owner/name (or is plainly at the path `bare`).
 */
async function withRemote(options: {remote?: string; bare?: string} = {}): Promise<string> {
  await world.gitRepo()
  const bare = options.bare ?? join(world.root, 'remote.git')
  await world.git(['init', '-q', '--bare', bare])
  await world.git(['config', `url.${bare}.insteadOf`, 'https://github.com/owner/name'])
  const remote = options.remote ?? 'origin'
  await world.git(['remote', 'add', remote, options.bare ?? 'https://github.com/owner/name'])
  await world.git(['push', '-q', '-u', remote, 'main'])
  return bare
}

async function remoteBranch(bare: string, branch: string): Promise<string> {
  const result = await execa('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {cwd: bare, env: world.env, extendEnv: false, reject: false})
  return String(result.stdout).trim()
}

const COMMIT_TWO = 'echo one > one.txt && git add one.txt && git commit -qm "one" -m "why one" && echo two > two.txt && git add two.txt && git commit -qm two'

/** The origin's branch, index and files, which pr leaves as they are. */
async function originState(): Promise<unknown> {
  const files = Object.entries(snapshot(world.origin)).filter(([path]) => path !== '.git' && !path.startsWith('.git/'))
  return {
    files,
    head: await world.git(['rev-parse', 'HEAD']),
    branch: await world.git(['symbolic-ref', 'HEAD']),
    index: readFileSync(join(world.origin, '.git', 'index')).toString('hex'),
  }
}

describe('hmm pr', () => {
  it('pushes to hmm/<name> of the remote the branch tracks and opens a pull request with gh, printing its URL', async () => {
    world = new World('pr-create')
    installGh()
    const bare = await withRemote()
    const ws = await made(world, COMMIT_TWO, 'feat')
    const before = await originState()
    const result = await taking(world, ['pr'])
    expect(result).toEqual({exitCode: 0, stdout: `${PR_URL}\n`, stderr: `hmm: pushed workspace ${ws.label} to origin hmm/feat\n`})
    expect(await remoteBranch(bare, 'hmm/feat')).toBe(await world.git(['rev-parse', `refs/hmm/${ws.id}`]))
    expect(await world.git(['log', '--format=%s', `refs/hmm/${ws.id}`])).toBe('two\none\nfirst')
    const calls = ghCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].slice(0, 3)).toEqual(['pr', 'view', 'hmm/feat'])
    expect(calls[0]).toContain('--repo=owner/name')
    expect(calls[1]).toEqual(['pr', 'create', '--repo=owner/name', '--base=main', '--head=hmm/feat', '--title=one', '--body=- one\n- two'])
    expect(await originState()).toEqual(before)
  })

  it("titles one commit's pull request with its subject, its body with the message body, passes --draft, and uses hmm/<id> when unnamed", async () => {
    world = new World('pr-one')
    installGh()
    const bare = await withRemote()
    const ws = await made(world, 'echo x > x.txt && git add x.txt && git commit -q -m "-leading dash subject" -m "line one" -m "line two"')
    expect(await taking(world, ['pr', '--draft'])).toMatchObject({exitCode: 0, stdout: `${PR_URL}\n`})
    expect(ghCalls()[1]).toEqual([
      'pr',
      'create',
      '--repo=owner/name',
      '--base=main',
      `--head=hmm/${ws.id}`,
      '--title=-leading dash subject',
      '--body=line one\n\nline two',
      '--draft',
    ])
    expect(await remoteBranch(bare, `hmm/${ws.id}`)).not.toBe('')
  })

  it('finds the pull request already opened with gh pr view when run again', async () => {
    world = new World('pr-again')
    installGh()
    await withRemote()
    const ws = await made(world, COMMIT_TWO, 'feat')
    expect((await taking(world, ['pr'])).exitCode).toBe(0)
    const again = await taking(world, ['pr', 'feat'])
    // Nothing new was pushed, and it says so instead of "pushed".
    expect(again).toEqual({exitCode: 0, stdout: `${PR_URL}\n`, stderr: `hmm: nothing new in workspace ${ws.label} since it was pushed to origin hmm/feat\n`})
    const calls = ghCalls()
    expect(calls.map(call => call[1])).toEqual(['view', 'create', 'view'])
  })

  it('overwrites the remote branch only if it is as hmm last pushed it', async () => {
    world = new World('pr-lease')
    installGh()
    const bare = await withRemote()
    const ws = await made(world, COMMIT_TWO, 'feat')
    expect((await taking(world, ['pr'])).exitCode).toBe(0)
    // Someone else moves hmm/feat.
    const other = join(world.root, 'other')
    await world.git(['clone', '-q', bare, other], world.root)
    await world.git(['checkout', '-q', '-b', 'x', 'origin/hmm/feat'], other)
    writeFileSync(join(other, 'theirs.txt'), 'theirs\n')
    await world.git(['add', 'theirs.txt'], other)
    await world.git(['commit', '-qm', 'theirs'], other)
    await world.git(['push', '-q', 'origin', 'x:hmm/feat'], other)
    const theirs = await remoteBranch(bare, 'hmm/feat')
    const result = await taking(world, ['pr', 'feat'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(new RegExp(`^hmm: could not push workspace ${ws.id} \\(feat\\) to origin hmm/feat: .*\\n$`))
    expect(await remoteBranch(bare, 'hmm/feat')).toBe(theirs)
  })

  it('does not overwrite a branch of that name hmm never pushed', async () => {
    world = new World('pr-taken')
    installGh()
    const bare = await withRemote()
    await world.git(['push', '-q', 'origin', 'main:hmm/feat'])
    const ws = await made(world, COMMIT_TWO, 'feat')
    const result = await taking(world, ['pr'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(new RegExp(`^hmm: could not push workspace ${ws.id} \\(feat\\) to origin hmm/feat: `))
    expect(await remoteBranch(bare, 'hmm/feat')).toBe(await world.git(['rev-parse', 'main']))
    expect(ghCalls()).toEqual([])
  })

  it('without gh prints the compare URL, into the branch the origin tracks on the remote it tracks', async () => {
    world = new World('pr-nogh')
    const bare = await withRemote({remote: 'upstream'})
    await world.git(['checkout', '-q', '-b', 'work', '--track', 'upstream/main'])
    const ws = await made(world, COMMIT_TWO)
    const result = await taking(world, ['pr'])
    expect(result).toEqual({
      exitCode: 0,
      stdout: `https://github.com/owner/name/compare/main...hmm/${ws.id}?expand=1\n`,
      stderr: `hmm: pushed workspace ${ws.label} to upstream hmm/${ws.id}\nhmm: no pull request was opened (gh is not installed); open one at:\n`,
    })
    expect(await remoteBranch(bare, `hmm/${ws.id}`)).not.toBe('')
  })

  it('only pushes to a remote not on GitHub, and says so', async () => {
    world = new World('pr-not-github')
    installGh()
    const bare = join(world.root, 'plain.git')
    await withRemote({bare})
    const ws = await made(world, COMMIT_TWO, 'feat')
    expect(await taking(world, ['pr'])).toEqual({exitCode: 0, stdout: '', stderr: `hmm: pushed workspace ${ws.label} to origin hmm/feat (not on GitHub)\n`})
    expect(await remoteBranch(bare, 'hmm/feat')).not.toBe('')
    expect(ghCalls()).toEqual([])
  })

  it('warns about changes the workspace did not commit', async () => {
    world = new World('pr-uncommitted')
    installGh()
    await withRemote()
    const ws = await made(world, `${COMMIT_TWO} && echo loose > loose.txt`)
    expect(await taking(world, ['pr'])).toEqual({
      exitCode: 0,
      stdout: `${PR_URL}\n`,
      stderr: `hmm: pushed workspace ${ws.label} to origin hmm/${ws.id}\nhmm: workspace ${ws.label} has changes it did not commit, which are not merged\n`,
    })
  })

  it('records the push, so rm removes the workspace without -f', async () => {
    world = new World('pr-rm')
    installGh()
    await withRemote()
    const ws = await made(world, COMMIT_TWO)
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(1)
    expect((await taking(world, ['pr'])).exitCode).toBe(0)
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(0)
  })

  it('says a workspace has no commits to push', async () => {
    world = new World('pr-nothing')
    installGh()
    await withRemote()
    const ws = await made(world, 'echo edit >> README.md')
    expect(await taking(world, ['pr'])).toEqual({exitCode: 1, stdout: '', stderr: `hmm: workspace ${ws.label} has no commits to push\n`})
    expect(ghCalls()).toEqual([])
  })

  it('says the origin has no remote of that name', async () => {
    world = new World('pr-no-remote')
    await world.gitRepo()
    await made(world, COMMIT_TWO)
    expect(await taking(world, ['pr'])).toEqual({exitCode: 1, stdout: '', stderr: `hmm: ${world.origin} has no remote origin\n`})
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
  })

  it('says so when the workspace name cannot be a branch name (given by an older hmm), before pushing anything', async () => {
    world = new World('pr-bad-name')
    installGh()
    const bare = await withRemote()
    const ws = await made(world, COMMIT_TWO, 'x')
    // hmm run refuses such a name now; an older hmm took it.
    const db = new Database(join(world.dataDir, 'registry.sqlite'))
    db.prepare("UPDATE workspaces SET name = 'x.lock' WHERE id = ?").run(ws.id)
    db.close()
    expect(await taking(world, ['pr'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: hmm/x.lock is not a valid branch name, so hmm pr cannot push to it\n'})
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    expect(await world.git(['for-each-ref', '--format=%(refname)'], bare)).toBe('refs/heads/main')
  })

  it('says the origin is not on a branch', async () => {
    world = new World('pr-detached')
    await withRemote()
    await world.git(['checkout', '-q', '--detach'])
    await made(world, COMMIT_TWO)
    expect(await taking(world, ['pr'])).toEqual({exitCode: 1, stdout: '', stderr: `hmm: ${world.origin} is not on a branch\n`})
  })

  it('refuses an origin that was not the top of a git repository', async () => {
    world = new World('pr-plain')
    world.file('a.txt', 'a\n')
    const ws = await made(world, 'echo b > b.txt')
    expect(await taking(world, ['pr'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `hmm: workspace ${ws.label} was not made from a git repository: hmm apply applies its changes\n`,
    })
  })

  it('refuses a running workspace', async () => {
    world = new World('pr-running')
    installGh()
    const bare = await withRemote()
    const go = join(world.root, 'go')
    const started = world.start(['run', '-n', 'busy', 'sh', '-c', `git commit -q --allow-empty -m x; echo ready; while [ ! -e '${go}' ]; do sleep 0.05; done`])
    await started.line('ready')
    const result = await taking(world, ['pr', 'busy'])
    writeFileSync(go, '')
    await started.result()
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: workspace ([0-9a-z]{6}) \(busy\) is running \(hmm stop \1 ends it\)\n$/)
    expect(await remoteBranch(bare, 'hmm/busy')).toBe('')
  })
})

describe('hmm pr, its pure parts', () => {
  it('knows GitHub remote URLs in their usual forms, and nothing else', async () => {
    const {githubRepo, compareUrl} = await import('../../src/git/github.js')
    for (const url of [
      'https://github.com/owner/name',
      'https://github.com/owner/name.git',
      'https://github.com/owner/name/',
      'https://user@github.com/owner/name.git',
      'git@github.com:owner/name.git',
      'git@github.com:owner/name',
      'ssh://git@github.com/owner/name.git',
      'ssh://git@github.com:22/owner/name',
      'git://github.com/owner/name.git',
    ]) {
      expect(githubRepo(url), url).toEqual({owner: 'owner', name: 'name'})
    }
    for (const url of [
      'https://gitlab.com/owner/name',
      'https://github.com.evil.example/owner/name',
      '/srv/git/name.git',
      'https://github.com/owner',
      'https://github.com/o/n/extra',
    ]) {
      expect(githubRepo(url), url).toBeUndefined()
    }
    expect(compareUrl({owner: 'o', name: 'n'}, 'release/1.x', 'hmm/k3xq9a')).toBe('https://github.com/o/n/compare/release/1.x...hmm/k3xq9a?expand=1')
  })

  it('titles and describes pull requests from the commits, oldest first', async () => {
    const {pullRequestText} = await import('../../src/app/pr.js')
    expect(pullRequestText([{subject: 'Fix it', body: 'Because.\n\nDetails.\n'}])).toEqual({title: 'Fix it', body: 'Because.\n\nDetails.'})
    expect(
      pullRequestText([
        {subject: 'a', body: 'x'},
        {subject: 'b', body: ''},
      ]),
    ).toEqual({title: 'a', body: '- a\n- b'})
  })
})
