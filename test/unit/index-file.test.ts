import {execa} from 'execa'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {distrustCurrentSecond, namesOf, parseIndex, rewriteIndex} from '../../src/git/index-file.js'
import {PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

async function repoWithIndex(format: 'sha1' | 'sha256' = 'sha1'): Promise<string> {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', 'index-'))
  dirs.push(dir)
  for (const name of ['a.txt', 'dir/b with space.txt', 'héllo', `${'x'.repeat(150)}/${'y'.repeat(150)}`]) {
    mkdirSync(join(dir, name, '..'), {recursive: true})
    writeFileSync(join(dir, name), name)
  }
  await execa('git', ['init', '-q', `--object-format=${format}`], {cwd: dir})
  await execa('git', ['add', '-A'], {cwd: dir})
  await execa('git', ['write-tree'], {cwd: dir}) // adds a TREE extension
  return dir
}

describe('the index file', () => {
  it('parses every entry of a real index, long and non-ASCII names included', async () => {
    const dir = await repoWithIndex()
    const parsed = parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!
    expect(parsed.entries.map(entry => entry.path).sort()).toEqual(['a.txt', 'dir/b with space.txt', 'héllo', `${'x'.repeat(150)}/${'y'.repeat(150)}`].sort())
    expect(parsed.entries.find(entry => entry.path === 'a.txt')!.stat.size).toBe(5)
  })

  it('lists the paths as git ls-files -z does, and none of a sparse or a split index', async () => {
    const dir = await repoWithIndex()
    const listed = (await execa('git', ['ls-files', '-z'], {cwd: dir})).stdout.split('\0').filter(Boolean)
    expect(parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!.paths()).toEqual(listed)
    const env = {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e'}
    await execa('git', ['commit', '-qm', 'x'], {cwd: dir, env})
    await execa('git', ['sparse-checkout', 'set', '--cone', '--sparse-index', 'dir'], {cwd: dir, env})
    expect(parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!.paths()).toBeUndefined()
    // Review 18: a split index names its entries in another file.
    const split = await repoWithIndex()
    await execa('git', ['update-index', '--split-index'], {cwd: split})
    writeFileSync(join(split, 'new.txt'), 'new\n')
    await execa('git', ['add', 'new.txt'], {cwd: split})
    expect(parseIndex(readFileSync(join(split, '.git/index')), 'sha1')!.paths()).toBeUndefined()
  })

  it('writes back an index git accepts, with the new stat data', async () => {
    const dir = await repoWithIndex()
    const parsed = parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!
    const entry = parsed.entries.find(e => e.path === 'a.txt')!
    const rewritten = rewriteIndex(parsed, entries => {
      entries.writeUInt32BE(12345, entry.offset + 20) // ino
      entries.writeUInt32BE(1, entry.offset + 8) // mtime seconds
    })
    expect(entry.word(5)).not.toBe(12345) // the parsed index itself is left as it was
    writeFileSync(join(dir, '.git/index'), rewritten!)
    const debug = (await execa('git', ['ls-files', '--debug', 'a.txt'], {cwd: dir})).stdout
    expect(debug).toMatch(/ino: 12345/)
    expect(debug).toMatch(/mtime: 1:/)
    expect((await execa('git', ['fsck', '--no-progress'], {cwd: dir, reject: false})).stderr).not.toMatch(/index/)
    expect((await execa('git', ['status', '--porcelain'], {cwd: dir})).stdout).toContain('A  a.txt')
  })

  it("lists entries' names as the helper reads them, each ended by a NUL", async () => {
    const dir = await repoWithIndex()
    const parsed = parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!
    const chosen = parsed.entries.filter(entry => entry.path !== 'a.txt')
    expect(namesOf(parsed, chosen).toString('utf8')).toBe(chosen.map(entry => `${entry.path}\0`).join(''))
  })

  it("reads and writes a SHA-256 repository's index (longer object names and checksum), and refuses to read it as SHA-1", async () => {
    const dir = await repoWithIndex('sha256')
    const buffer = readFileSync(join(dir, '.git/index'))
    expect(parseIndex(buffer, 'sha1')).toBeUndefined()
    const parsed = parseIndex(buffer, 'sha256')!
    expect(parsed.entries.map(entry => entry.path)).toContain('dir/b with space.txt')
    const entry = parsed.entries.find(e => e.path === 'a.txt')!
    writeFileSync(
      join(dir, '.git/index'),
      rewriteIndex(parsed, entries => entries.writeUInt32BE(12345, entry.offset + 20))!,
    )
    expect((await execa('git', ['ls-files', '--debug', 'a.txt'], {cwd: dir})).stdout).toMatch(/ino: 12345/)
    expect((await execa('git', ['status', '--porcelain'], {cwd: dir})).stdout).toContain('A  a.txt')
  })

  it('refuses what it does not understand rather than guess', () => {
    expect(parseIndex(Buffer.from('not an index at all, not at all'), 'sha1')).toBeUndefined()
    const v4 = Buffer.alloc(40)
    v4.write('DIRC')
    v4.writeUInt32BE(4, 4)
    expect(parseIndex(v4, 'sha1')).toBeUndefined()
  })
})

describe('distrusting the current second', () => {
  it('makes entries whose ctime is in or after the given second mismatch, and keeps the rest', async () => {
    const dir = await repoWithIndex()
    const parsed = parseIndex(readFileSync(join(dir, '.git/index')), 'sha1')!
    const [old, recent] = parsed.entries
    const staged = parseIndex(
      rewriteIndex(parsed, entries => {
        entries.writeUInt32BE(100, old.offset)
        entries.writeUInt32BE(200, recent.offset)
      })!,
      'sha1',
    )!
    const result = parseIndex(distrustCurrentSecond(staged, 200)!, 'sha1')!
    expect(result.entries[0].stat.ctimeSec).toBe(100)
    expect(result.entries[1].stat).toMatchObject({ctimeSec: 0, ctimeNsec: 0, mtimeSec: recent.stat.mtimeSec, ino: recent.stat.ino})
    expect(distrustCurrentSecond(staged, 4_000_000_000)).toBe(staged.buffer)
  })
})
