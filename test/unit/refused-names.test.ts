// The names merge and pr refuse in a workspace's commits (git/review.ts
// refusedName) are exactly those git's own object check refuses: asked of
// git fsck.
import {execa} from 'execa'
import {mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {refusedName} from '../../src/git/refused-paths.js'
import {PROJECT} from '../world.js'

mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
const root = mkdtempSync(join(PROJECT, '.test-worlds', 'refused-names-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

/** The names among `names` that git fsck refuses (hasDot, hasDotdot, hasDotgit), each in a tree of its own, checked at once. */
async function gitRefuses(names: string[]): Promise<Set<string>> {
  const dir = mkdtempSync(join(root, 'repo-'))
  const git = (args: string[], input?: string) => execa('git', args, {cwd: dir, input, reject: false})
  await git(['init', '-q'])
  const blob = (await git(['hash-object', '-w', '--stdin'], 'x\n')).stdout
  const trees = (await git(['mktree', '--batch'], names.map(name => `100644 blob ${blob}\t${name}\n`).join('\n'))).stdout.split('\n')
  expect(trees).toHaveLength(names.length)
  // fsck checks every object, unreachable ones too: `warning in tree <id>: hasDotgit: ...`.
  const fsck = await git(['fsck', '--no-dangling'])
  const refused = new Set([...`${fsck.stdout}\n${fsck.stderr}`.matchAll(/tree ([0-9a-f]+): hasDot(?:git|dot)?:/g)].map(match => match[1]))
  return new Set(names.filter((_, at) => refused.has(trees[at])))
}

const NAMES = [
  ...['.', '..', '.git', '.GIT', '.Git', '.git.', '.git ', '.git. .', 'git~1', 'GIT~1', 'git~1.', '.g\u200cit', '\ufeff.git'],
  ...['.git\\hooks', '.git:x', '.git::$INDEX_ALLOCATION', 'git~1:x', 'git~1\\x'],
  ...['.gitx', '.github', '.gitignore', '.gitattributes', 'git', 'git~10', 'git~1x', '.g\u200cit.', '...', 'x.git', '.git.x', 'a.', 'G\u0130T~1'],
]

describe('refusedName', () => {
  it('refuses exactly the names git fsck refuses', async () => {
    const refused = await gitRefuses(NAMES)
    expect(NAMES.map(name => [name, refusedName(name)])).toEqual(NAMES.map(name => [name, refused.has(name)]))
    // Both kinds are among them.
    expect(refused.size).toBeGreaterThan(10)
    expect(NAMES.length - refused.size).toBeGreaterThan(10)
  })
})
