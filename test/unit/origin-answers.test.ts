// What `hmm run` asks of the origin's repository before it records it
// (src/git/origin.ts askGitOrigin): asked in as few gits as answer it, and
// answered as git itself answers each question, however HEAD stands.
import {execa} from 'execa'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {askGitOrigin} from '../../src/git/origin.js'
import {PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

const env = {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e'}
const git = (cwd: string, ...args: string[]) => execa('git', args, {cwd, env}).then(r => r.stdout)

async function repository(): Promise<string> {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', 'origin-answers-'))
  dirs.push(dir)
  await git(dir, 'init', '-q', '-b', 'feature/x')
  return dir
}

async function commit(dir: string): Promise<string> {
  writeFileSync(join(dir, 'a.txt'), `${Math.random()}\n`)
  await git(dir, 'add', '-A')
  await git(dir, 'commit', '-qm', 'x')
  return git(dir, 'rev-parse', 'HEAD')
}

describe("the origin's answers", () => {
  it('name the commit and the branch of a HEAD on a branch, the commit alone when detached, the branch alone before the first commit', async () => {
    const unborn = await repository()
    expect(await askGitOrigin(unborn)).toMatchObject({headCommit: null, headBranch: 'feature/x'})
    const first = await commit(unborn)
    expect(await askGitOrigin(unborn)).toMatchObject({headCommit: first, headBranch: 'feature/x'})
    // A tag of the branch's name: the branch is still its name under refs/heads.
    await git(unborn, 'tag', 'feature/x')
    expect(await askGitOrigin(unborn)).toMatchObject({headCommit: first, headBranch: 'feature/x'})
    await git(unborn, 'checkout', '-q', '--detach')
    expect(await askGitOrigin(unborn)).toMatchObject({headCommit: first, headBranch: null})
  })

  it('are none for a directory that is no top of a repository', async () => {
    const dir = await repository()
    mkdirSync(join(dir, 'sub'))
    expect(await askGitOrigin(join(dir, 'sub'))).toBeUndefined()
  })

  it("give the last core.excludesFile expanded as git does, and leave each filter driver without its program, also when a driver's value cannot be expanded", async () => {
    const dir = await repository()
    await commit(dir)
    await git(dir, 'config', '--add', 'core.excludesFile', '/first')
    await git(dir, 'config', '--add', 'core.excludesFile', '~/ignored')
    await git(dir, 'config', 'filter.lfs.clean', 'git-lfs clean -- %f')
    await git(dir, 'config', 'filter.lfs.required', 'true')
    const expected = ['-c', 'filter.lfs.clean=', '-c', 'filter.lfs.process=', '-c', 'filter.lfs.required=false']
    const expanded = await git(dir, 'config', '--path', '--get', 'core.excludesFile')
    expect(await askGitOrigin(dir)).toMatchObject({excludesFile: expanded, asBytes: expected})
    // Review 18: a value may hold a newline.
    await git(dir, 'config', '--add', 'core.excludesFile', '/a\nb')
    expect(await askGitOrigin(dir)).toMatchObject({excludesFile: '/a\nb', asBytes: expected})
    await git(dir, 'config', '--unset', 'core.excludesFile', '^/a')
    await git(dir, 'config', 'filter.Crypt.smudge', '~no-such-user-here/smudge')
    const both = [...expected, '-c', 'filter.Crypt.clean=', '-c', 'filter.Crypt.process=', '-c', 'filter.Crypt.required=false']
    expect(await askGitOrigin(dir)).toMatchObject({excludesFile: expanded, asBytes: both})
  })
})
