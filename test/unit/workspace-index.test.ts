// The workspace's first index: the clone's own stat data where the origin
// provably did not change, so the first diff reads only what changed.
import {execa} from 'execa'
import {mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {gitOriginOf, recordGitOrigin, startWorkspaceIndex} from '../../src/git/origin.js'
import {parseIndex} from '../../src/git/index-file.js'
import {readFileSync} from 'node:fs'
import {PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

async function forkAndClone(): Promise<{origin: string; tree: string; gitDir: string}> {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', 'wsindex-'))
  dirs.push(dir)
  const origin = join(dir, 'origin')
  mkdirSync(join(origin, 'src'), {recursive: true})
  for (const name of ['a.txt', 'src/b.c', 'c d.txt']) writeFileSync(join(origin, name), `${name}\n`)
  const env = {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e'}
  await execa('git', ['init', '-q'], {cwd: origin, env})
  await execa('git', ['add', '-A'], {cwd: origin, env})
  await execa('git', ['commit', '-qm', 'x'], {cwd: origin, env})
  writeFileSync(join(origin, 'a.txt'), 'changed, uncommitted\n')
  const gitDir = join(dir, 'git')
  await recordGitOrigin(origin, (await gitOriginOf(origin))!, gitDir)
  const tree = join(dir, 'tree')
  await execa('cp', ['-a', origin, tree])
  return {origin, tree, gitDir}
}

function entries(gitDir: string) {
  return parseIndex(readFileSync(join(gitDir, 'index')))!.entries
}

describe("the workspace's first index", () => {
  it("takes the clone's stat data for files the origin did not change since git hashed them", async () => {
    const {origin, tree, gitDir} = await forkAndClone()
    startWorkspaceIndex(gitDir, {...(await gitOriginOf(origin))!, path: origin}, tree, () => Date.now() + 10_000)
    for (const entry of entries(gitDir)) {
      expect(entry.stat.ino, entry.path).toBe(statSync(join(tree, entry.path)).ino)
      expect(entry.stat.size, entry.path).toBe(statSync(join(tree, entry.path)).size)
    }
  })

  it('keeps the origin\'s stat data (so git reads the file) where the origin changed after the fork, or the clone is from this second', async () => {
    const {origin, tree, gitDir} = await forkAndClone()
    writeFileSync(join(origin, 'src/b.c'), 'changed after the fork\n')
    startWorkspaceIndex(gitDir, {...(await gitOriginOf(origin))!, path: origin}, tree, () => Date.now() + 10_000)
    const byPath = new Map(entries(gitDir).map(entry => [entry.path, entry]))
    expect(byPath.get('src/b.c')!.stat.ino).not.toBe(statSync(join(tree, 'src/b.c')).ino)
    expect(byPath.get('a.txt')!.stat.ino).toBe(statSync(join(tree, 'a.txt')).ino)
    // Cloned in the very second the index is made: not trusted at all.
    startWorkspaceIndex(gitDir, {...(await gitOriginOf(origin))!, path: origin}, tree, () => 0)
    for (const entry of entries(gitDir)) expect(entry.stat.ino, entry.path).not.toBe(statSync(join(tree, entry.path)).ino)
  })
})
