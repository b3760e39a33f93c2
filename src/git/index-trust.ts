// Keeps the private index honest after git wrote it (see index-file.ts,
// distrustCurrentSecond): rewritten under git's own lock protocol
// (<index>.lock, created exclusively, renamed into place), so a concurrent
// git or hmm never sees half an index.
import {closeSync, constants, openSync, readFileSync, renameSync, rmSync, writeSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {HmmError} from '../ui/errors.js'
import {distrustCurrentSecond, parseIndex} from './index-file.js'

const LOCK_TRIES = 20
const LOCK_WAIT_MS = 100

async function lock(path: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return openSync(`${path}.lock`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
    } catch (error) {
      if ((error as {code?: string}).code !== 'EEXIST' || attempt >= LOCK_TRIES) {
        throw new HmmError(`could not lock ${path}: ${(error as Error).message}`)
      }
      await sleep(LOCK_WAIT_MS)
    }
  }
}

/**
 * Makes git re-read, next time, every file whose stat data it may have
 * taken in the second `sinceMs` falls in or later (pass the time before git
 * started looking at the files). An index this cannot parse (a SHA-256 or version 4 one)
 * is removed instead: git then reads every file each time — slow, never wrong.
 */
export async function distrustRecentEntries(indexPath: string, sinceMs: number): Promise<void> {
  const fd = await lock(indexPath)
  try {
    let current: Buffer
    try {
      current = readFileSync(indexPath)
    } catch {
      return // no index yet: nothing is trusted
    }
    const parsed = parseIndex(current)
    const rewritten = parsed && distrustCurrentSecond(parsed, Math.floor(sinceMs / 1000))
    if (rewritten === current) return
    if (!rewritten) {
      rmSync(indexPath, {force: true})
      return
    }
    writeSync(fd, rewritten)
    renameSync(`${indexPath}.lock`, indexPath)
  } finally {
    closeSync(fd)
    rmSync(`${indexPath}.lock`, {force: true})
  }
}
