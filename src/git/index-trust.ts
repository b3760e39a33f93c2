// Keeps the private index honest: git (Debian's, built without USE_NSEC)
// compares ctime and mtime to the second only, so a file changed at the same
// size, its mtime put back, in the very second its stat data was taken,
// would look unchanged to git. Stat data git took while the command may be
// running (every `git add` of a diff): entries from the second git started
// looking on are made to mismatch (ctime 0), so git reads them again next
// time (distrustRecentEntries). The first index, written before the command
// starts, is kept honest another way (first-index.ts).
//
// Rewrites follow git's lock protocol (<index>.lock, created exclusively,
// renamed into place), so a concurrent git or hmm never sees half an index.
import {closeSync, constants, fstatSync, futimesSync, lstatSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, utimesSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {HmmError} from '../ui/errors.js'
import {distrustCurrentSecond, parseIndex, type ObjectFormat, type ParsedIndex} from './index-file.js'

/** How often, and how long, to wait for another git or hmm holding the private index (a diff while a diff runs). */
export const INDEX_LOCK_TRIES = 20
export const INDEX_LOCK_WAIT_MS = 100

async function lock(path: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return openSync(`${path}.lock`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
    } catch (error) {
      if ((error as {code?: string}).code !== 'EEXIST' || attempt >= INDEX_LOCK_TRIES) {
        throw new HmmError(`could not lock ${path}: ${(error as Error).message}`)
      }
      await sleep(INDEX_LOCK_WAIT_MS)
    }
  }
}

/** Whether the lock file at path is still the one fd was opened on (nobody removed it and took the lock since). */
function stillOwned(fd: number, path: string): boolean {
  const ours = fstatSync(fd, {bigint: true})
  const there = lstatSync(path, {bigint: true, throwIfNoEntry: false})
  return there !== undefined && there.dev === ours.dev && there.ino === ours.ino
}

/** The private repository's object format, from the config git init wrote in it (beside the index). */
export function objectFormatOf(indexPath: string): ObjectFormat {
  const config = readFileSync(join(dirname(indexPath), 'config'), 'utf8')
  return /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 'sha256' : 'sha1'
}

/**
 * Rewrites the index with `change`, which returns the new bytes (the same
 * buffer: no change) or undefined when it cannot rewrite this index (a
 * version 4 one, copied from the origin): then the index is removed and the
 * answer is 'removed' — the caller must have git make a new one, reading
 * every file (slow, never wrong). No index: nothing to do.
 */
export async function rewriteLocked(
  indexPath: string,
  change: (parsed: ParsedIndex) => Buffer | undefined,
  dateAfter?: (parsed: ParsedIndex) => number,
): Promise<'kept' | 'removed'> {
  const fd = await lock(indexPath)
  const lockPath = `${indexPath}.lock`
  // Renamed into place, the lock is the index: the name is free for the next writer's lock.
  let renamed = false
  try {
    let current: Buffer
    try {
      current = readFileSync(indexPath)
    } catch {
      return 'kept'
    }
    const parsed = parseIndex(current, objectFormatOf(indexPath))
    const rewritten = parsed && change(parsed)
    // Dated, as the lock is held, after the second dateAfter says (if it is not already).
    const newest = parsed && rewritten && dateAfter ? dateAfter(parsed) : undefined
    if (rewritten === current) {
      const written = lstatSync(indexPath)
      if (newest !== undefined && newest >= Math.floor(written.mtimeMs / 1000)) utimesSync(indexPath, written.atime, newest + 1)
      return 'kept'
    }
    if (!rewritten) {
      rmSync(indexPath, {force: true})
      return 'removed'
    }
    writeSync(fd, rewritten)
    if (newest !== undefined && newest >= Math.floor(Date.now() / 1000)) futimesSync(fd, newest + 1, newest + 1)
    if (!stillOwned(fd, lockPath)) throw new HmmError(`lost the lock of ${indexPath}: another writer took it`)
    renameSync(lockPath, indexPath)
    renamed = true
    return 'kept'
  } finally {
    if (!renamed && stillOwned(fd, lockPath)) unlinkSync(lockPath)
    closeSync(fd)
  }
}

/** Dates the index after the second `newestSec` (if it is not already), holding its lock: no git writes it meanwhile. */
export async function dateIndexAfter(indexPath: string, newestSec: number): Promise<void> {
  const fd = await lock(indexPath)
  const lockPath = `${indexPath}.lock`
  try {
    const written = lstatSync(indexPath, {throwIfNoEntry: false})
    if (written && newestSec >= Math.floor(written.mtimeMs / 1000)) utimesSync(indexPath, written.atime, newestSec + 1)
  } finally {
    if (stillOwned(fd, lockPath)) unlinkSync(lockPath)
    closeSync(fd)
  }
}

/**
 * Makes git re-read, next time, every file whose stat data it may have
 * taken in the second `sinceMs` falls in or later (pass the time before git
 * started looking at the files). `seen` is shown the index as parsed, for
 * what else its caller needs of it (an index of 100,000 entries takes a
 * tenth of a second to parse).
 */
export async function distrustRecentEntries(indexPath: string, sinceMs: number, seen?: (parsed: ParsedIndex) => void): Promise<'kept' | 'removed'> {
  return rewriteLocked(indexPath, parsed => {
    seen?.(parsed)
    return distrustCurrentSecond(parsed, Math.floor(sinceMs / 1000))
  })
}
