// The private index's lock (<index>.lock) is deleted only by whoever made it
// and still owns it: never another writer's fresh lock (issue 12, item 9).
import {execa} from 'execa'
import {closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {gitBytes, type GitOptions} from '../../src/git/git.js'
import {rewriteLocked} from '../../src/git/index-trust.js'
import {readerOf} from '../../src/platform/confined.js'
import {PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

async function repo(): Promise<{dir: string; index: string}> {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', 'index-lock-'))
  dirs.push(dir)
  await execa('git', ['init', '-q', dir])
  writeFileSync(join(dir, 'a.txt'), 'a\n')
  await execa('git', ['add', 'a.txt'], {cwd: dir})
  return {dir, index: join(dir, '.git', 'index')}
}

/** git reading the repository as hmm's git reads a workspace: confined, writing only its .git (platform/confined.ts). */
function asWorkspace(dir: string): NonNullable<GitOptions['readsWorkspace']> {
  // A workspace's directory is one of hmm's data directory (the sandbox covers the data directory and binds it back).
  const data = mkdtempSync(join(PROJECT, '.test-worlds', 'index-lock-data-'))
  dirs.push(data)
  const root = join(data, 'w')
  mkdirSync(root)
  return {label: 'w', reader: readerOf({tree: dir, root}, data, join(dir, '.git'), [])}
}

/** Another writer takes the lock the way git does: created exclusively. */
function otherWritersLock(index: string): void {
  const fd = openSync(`${index}.lock`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
  writeFileSync(fd, "another writer's index")
  closeSync(fd)
}

describe('rewriting the private index', () => {
  /** What a killed git's clean-up does to a lock it takes for stale, then a new writer takes it. */
  const lockTakenOver = (index: string) => {
    unlinkSync(`${index}.lock`)
    otherWritersLock(index)
  }

  it('leaves alone a lock that is no longer its own, when it had nothing to change', async () => {
    const {index} = await repo()
    const before = readFileSync(index)
    const result = await rewriteLocked(index, parsed => {
      lockTakenOver(index)
      return parsed.buffer
    })
    expect(result).toBe('kept')
    expect(readFileSync(`${index}.lock`, 'utf8')).toBe("another writer's index")
    expect(readFileSync(index)).toEqual(before)
  })

  it("neither puts another writer's lock in place of the index nor deletes it, when it had a change to write", async () => {
    const {index} = await repo()
    const before = readFileSync(index)
    await expect(
      rewriteLocked(index, parsed => {
        lockTakenOver(index)
        return Buffer.from(parsed.buffer)
      }),
    ).rejects.toThrow(/lost the lock/)
    expect(readFileSync(`${index}.lock`, 'utf8')).toBe("another writer's index")
    expect(readFileSync(index)).toEqual(before)
  })

  it('puts the rewritten index in place and leaves no lock', async () => {
    const {index} = await repo()
    const before = readFileSync(index)
    expect(await rewriteLocked(index, parsed => Buffer.from(parsed.buffer))).toBe('kept')
    expect(readFileSync(index)).toEqual(before)
    expect(existsSync(`${index}.lock`)).toBe(false)
  })
})

describe.skipIf(process.platform !== 'linux')('a git stopped while it waits on a FIFO', () => {
  it("leaves another writer's lock of the index alone (the stopped git never took it)", async () => {
    const {dir, index} = await repo()
    await execa('mkfifo', [join(dir, 'fifo')])
    otherWritersLock(index)
    await expect(gitBytes(['hash-object', 'fifo'], {cwd: dir, env: {GIT_INDEX_FILE: index}, readsWorkspace: asWorkspace(dir)})).rejects.toThrow(
      /waiting on a FIFO/,
    )
    expect(readFileSync(`${index}.lock`, 'utf8')).toBe("another writer's index")
  })

  it('removes the lock it took itself (git add, stopped while it held the index)', async () => {
    const {dir, index} = await repo()
    // A nested repository whose HEAD is a FIFO: git add opens it, holding the index's lock.
    mkdirSync(join(dir, 'sub', '.git', 'objects'), {recursive: true})
    mkdirSync(join(dir, 'sub', '.git', 'refs'))
    await execa('mkfifo', [join(dir, 'sub', '.git', 'HEAD')])
    await expect(gitBytes(['add', '--all'], {cwd: dir, env: {GIT_INDEX_FILE: index}, readsWorkspace: asWorkspace(dir)})).rejects.toThrow(/waiting on a FIFO/)
    expect(existsSync(`${index}.lock`)).toBe(false)
  })
})
