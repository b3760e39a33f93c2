// Keeps the private index honest: git (Debian's, built without USE_NSEC)
// compares ctime and mtime to the second only, so a file changed at the same
// size, its mtime put back, in the very second its stat data was taken,
// would look unchanged to git. Two cases, two remedies:
//
// - Stat data git took while the command may be running (every `git add`
//   of a diff): entries from the second git started looking on are made to
//   mismatch (ctime 0), so git reads them again next time
//   (distrustRecentEntries).
// - The first index, written before the command starts: its entries from the
//   second it was written on are kept, and checked to the nanosecond against
//   the files before git next uses the index (markForCheck,
//   checkMarkedEntries). That is sound because hmm starts the command at
//   least one clock tick after the tree was made (app/run.ts): whatever the
//   command changes gets a ctime no file of the clone had. Zeroing them
//   instead would make the first diff re-read every file cloned in the last
//   second: a third of a big tree.
//
// Rewrites follow git's lock protocol (<index>.lock, created exclusively,
// renamed into place), so a concurrent git or hmm never sees half an index.
import {closeSync, constants, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {statPairs} from '../native/helper.js'
import {debug, HmmError} from '../ui/errors.js'
import {compareStat, distrustCurrentSecond, distrustEntries, namesOf, parseIndex, type ObjectFormat, type ParsedIndex} from './index-file.js'

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
async function rewriteLocked(indexPath: string, change: (parsed: ParsedIndex) => Buffer | undefined): Promise<'kept' | 'removed'> {
  const fd = await lock(indexPath)
  try {
    let current: Buffer
    try {
      current = readFileSync(indexPath)
    } catch {
      return 'kept'
    }
    const parsed = parseIndex(current, objectFormatOf(indexPath))
    const rewritten = parsed && change(parsed)
    if (rewritten === current) return 'kept'
    if (!rewritten) {
      rmSync(indexPath, {force: true})
      return 'removed'
    }
    writeSync(fd, rewritten)
    renameSync(`${indexPath}.lock`, indexPath)
    return 'kept'
  } finally {
    closeSync(fd)
    rmSync(`${indexPath}.lock`, {force: true})
  }
}

/**
 * Makes git re-read, next time, every file whose stat data it may have
 * taken in the second `sinceMs` falls in or later (pass the time before git
 * started looking at the files).
 */
export async function distrustRecentEntries(indexPath: string, sinceMs: number): Promise<'kept' | 'removed'> {
  return rewriteLocked(indexPath, parsed => distrustCurrentSecond(parsed, Math.floor(sinceMs / 1000)))
}

const markerOf = (indexPath: string) => `${indexPath}.check-from`

/**
 * Says that the index's entries whose ctime falls in `second` or later are
 * to be checked to the nanosecond before git next uses it (the index was
 * just written, before the command started).
 */
export function markForCheck(indexPath: string, second: number): void {
  writeFileSync(markerOf(indexPath), `${second}\n`)
}

/**
 * The check markForCheck asked for: entries from the marked second on whose
 * file git would take as recorded, comparing times to the second, but is
 * not exactly (ctime or mtime differ in their nanoseconds) are made to
 * mismatch. The mark goes once that second is over: any later change gets a
 * later second, which git sees itself.
 */
export async function checkMarkedEntries(indexPath: string, tree: string): Promise<void> {
  const marker = markerOf(indexPath)
  if (!existsSync(marker)) return
  const second = Number.parseInt(readFileSync(marker, 'utf8'), 10)
  const now = Date.now()
  await rewriteLocked(indexPath, parsed => {
    if (!Number.isInteger(second)) return distrustCurrentSecond(parsed, 0)
    const suspects = parsed.changedSince(second)
    if (suspects.length === 0) return parsed.buffer
    const stats = statPairs(tree, tree, {names: namesOf(parsed, suspects), count: suspects.length})
    // Only where git, comparing to the second, would be fooled; a change it sees itself needs no help.
    const fooling = suspects.filter((entry, index) => compareStat(entry, stats.kind(index, 0), n => stats.word(index, 0, n)) === 'to-the-second')
    debug(`checked ${suspects.length} entries cloned in the second the command started; ${fooling.length} changed since`)
    return distrustEntries(parsed, fooling)
  })
  if (!Number.isInteger(second) || Math.floor(now / 1000) > second) rmSync(marker, {force: true})
}
