// The first index: the speed-up that lets the first diff of a big tree read
// only what the command changed, in one module (plan, write, check).
// HMM_FIRST_INDEX=0 turns it off: then the private index is made the plain
// git way (git add reads every file the first time; a plain origin's index,
// hashed before the command starts, has its entries of that second
// distrusted), and the helper answers no stat pairs.
//
// - plan (before the clone): which entries of the fork index (a copy of the
//   origin's, see origin.ts) may take the clone's stat data: those git
//   hashed strictly before it wrote that index (racily clean ones aside).
// - write (after the clone): for each such file the origin did not change
//   since (its stat data exactly as recorded), the clone's stat data stands
//   in; the rest keep the origin's, which never matches a clone, so git
//   reads them. The stat pairs come from the helper's clone as it copies.
// - check: git (Debian's, built without USE_NSEC) compares times to the
//   second, so entries from the second the index was written on are marked,
//   and checked to the nanosecond against the files before git next uses
//   the index. That is sound because the command starts only once whatever
//   it changes gets a ctime no file of the clone had (afterTreeMade: a
//   clock tick later, or at once where the kernel stamps ctimes finely).
//   Zeroing them instead would make the first diff re-read every file
//   cloned in the last second: a third of a big tree.
// - checked once: the mark stays until its second is over, but the end of
//   the command the workspace was made for, when nothing of it runs any
//   more (its PID namespace ended everything with it, and nothing holds
//   the lock), stamps its check; later checks trust the stamp unless a
//   command started since (noteCommandStart), so a first diff in that
//   second does not check the same entries again.
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import {dirname, join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {STAT_WORDS, statPairs, type StatPairs} from '../native/helper.js'
import {debug} from '../ui/errors.js'
import {
  compareStat,
  CTIME_NSEC,
  CTIME_SEC,
  distrustCurrentSecond,
  distrustEntries,
  MODE,
  MTIME_NSEC,
  MTIME_SEC,
  namesOf,
  parseIndex,
  rewriteIndex,
  SIZE,
  wordsOf,
  type IndexEntry,
  type ParsedIndex,
} from './index-file.js'
import {distrustRecentEntries, objectFormatOf, rewriteLocked} from './index-trust.js'
import {privateRepo} from './private-repo.js'

/** Whether the first index is on (HMM_FIRST_INDEX=0 turns it off). */
export function firstIndexOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.HMM_FIRST_INDEX !== '0'
}

const NS = 1_000_000_000n
/** What the clone's file gives its entry: everything but the mode (git's normalised one stays). */
const ADOPTED = STAT_WORDS.map((_, n) => n).filter(n => n !== MODE)

/**
 * The workspace's first index is the fork's, with the clone's stat data for
 * every file the origin provably did not change since git hashed it (see
 * the header). The rest keep the origin's stat data, which never matches
 * a clone, so git reads them. Planned before the clone (which entries may
 * take the clone's stat data), written after it from the stat pairs of
 * those paths.
 */
export interface FirstIndexPlan {
  gitDir: string
  /** The fork index; undefined when it cannot be rewritten (version 4, an unknown object format): then it is copied as it is. */
  parsed?: ParsedIndex
  candidates: IndexEntry[]
  /** The candidates' paths, NUL-terminated, for the helper. */
  paths: {names: Buffer; count: number}
}

/** The plan, before the clone; undefined when the first index is off or there is no fork index (no index in the origin). */
export function planFirstIndex(gitDir: string, objectFormat: string): FirstIndexPlan | undefined {
  if (!firstIndexOn()) return undefined
  const forkIndex = join(gitDir, 'index.fork')
  if (!existsSync(forkIndex)) return undefined
  const parsed = objectFormat === 'sha1' || objectFormat === 'sha256' ? parseIndex(readFileSync(forkIndex), objectFormat) : undefined
  if (!parsed) return {gitDir, candidates: [], paths: {names: Buffer.alloc(0), count: 0}}
  const written = lstatSync(forkIndex, {bigint: true}).mtimeNs
  const writtenSec = Number(written / NS)
  const writtenNsec = Number(written % NS)
  const candidates = parsed.entries.filter(entry => {
    if (entry.kind === 'other') return false
    // Racily clean: written in the same instant as the index, git itself does not trust its stat data.
    const mtimeSec = entry.word(MTIME_SEC)
    return mtimeSec < writtenSec || (mtimeSec === writtenSec && entry.word(MTIME_NSEC) < writtenNsec)
  })
  return {gitDir, parsed, candidates, paths: {names: namesOf(parsed, candidates), count: candidates.length}}
}

/**
 * Writes the first index, before the command starts. `stats` answers for
 * the plan's paths: side 0 the origin's file, side 1 the clone's, both
 * taken after the clone copied it.
 */
export function writeFirstIndex(plan: FirstIndexPlan, stats: StatPairs, treeMade: number, nowMs = Date.now): void {
  const forkIndex = join(plan.gitDir, 'index.fork')
  const workspaceIndex = privateRepo(plan.gitDir).index
  const second = Math.floor(nowMs() / 1000)
  let adopted = 0
  let latestCtime = 0
  let newestMtime = 0
  const rewritten =
    plan.parsed &&
    rewriteIndex(plan.parsed, entries => {
      const words = wordsOf(entries)
      for (let index = 0; index < plan.candidates.length; index++) {
        const entry = plan.candidates[index]
        // The origin's file as git recorded it, so the clone holds the same bytes ...
        if (compareStat(entry, stats.kind(index, 0), n => stats.word(index, 0, n)) !== 'exactly') continue
        // ... then the clone's own stat data can stand in.
        if (stats.kind(index, 1) !== entry.kind || stats.word(index, 1, SIZE) !== entry.word(SIZE)) continue
        for (const n of ADOPTED) words.setUint32(entry.offset + 4 * n, stats.word(index, 1, n))
        latestCtime = Math.max(latestCtime, stats.word(index, 1, CTIME_SEC))
        const mtime = stats.word(index, 1, MTIME_SEC)
        if (mtime <= second) newestMtime = Math.max(newestMtime, mtime)
        adopted++
      }
    })
  debug(`first index: the clone's stat data for ${adopted} of ${plan.parsed?.count ?? 0} entries`)
  if (!rewritten) {
    copyFileSync(forkIndex, workspaceIndex)
    return
  }
  writeFileSync(workspaceIndex, rewritten)
  // Entries cloned in the second the command may start in are checked to the nanosecond before git uses them.
  if (latestCtime >= second) markForCheck(workspaceIndex, second, treeMade)
  // Not racily clean (see dateAfterEntries): only the entries adopted can match their files, and any change the command
  // makes to one gives it a ctime git sees, or, in the marked second, the check does.
  dateAfter(workspaceIndex, newestMtime)
}

/** Longer than a tick of the kernel's coarse clock (HZ 100: 10 ms), which stamps ctimes. */
const CLOCK_TICK_MS = 20

/**
 * Whether, on the file system of `dir`, every ctime stamped from now on is
 * later than `sinceMs` and than every ctime stamped before. The kernel's
 * stamps never go back: each is the coarse clock's time or, from Linux 6.13
 * on, the latest fine one handed out if that is later (multigrain
 * timestamps). So once a probe's changes get rising ctimes past `sinceMs`,
 * every later change gets a later ctime than all made before the probe.
 * They rise at once where the kernel stamps a looked-at file's change from
 * the fine clock (6.13: ext4, XFS, Btrfs, tmpfs); elsewhere (ramfs, older
 * kernels) only when a tick, or a fine stamp elsewhere, comes between.
 * `beforeChange`: what runs before each change (tests: a preemption).
 */
export function ctimesLaterFromNow(dir: string, sinceMs: number, beforeChange?: () => void): boolean {
  const probe = join(dir, `.ctime-probe.${process.pid}`)
  let fd: number
  try {
    fd = openSync(probe, 'wx', 0o600)
  } catch {
    return false
  }
  try {
    let last = BigInt(Math.ceil(sinceMs)) * 1_000_000n
    fstatSync(fd) // looked at: the next change is stamped finely where the kernel can
    for (let change = 0; change < 3; change++) {
      beforeChange?.()
      writeSync(fd, 'x')
      const ctime = fstatSync(fd, {bigint: true}).ctimeNs
      if (ctime <= last) return false
      last = ctime
    }
    return true
  } finally {
    closeSync(fd)
    rmSync(probe, {force: true})
  }
}

/**
 * Makes sure that whatever the command changes from now on gets a ctime
 * later than any file of the tree made at `treeMade` (see the header):
 * at once where ctimes are stamped finely (ctimesLaterFromNow, probed in
 * `dir`, on the tree's file system), else by waiting a clock tick. Nothing
 * to wait for when the first index is off.
 */
export async function afterTreeMade(treeMade: number, dir: string): Promise<void> {
  if (!firstIndexOn() || ctimesLaterFromNow(dir, treeMade)) return
  const wait = treeMade + CLOCK_TICK_MS - Date.now()
  if (wait > 0) await sleep(wait)
}

/**
 * A private index just hashed from a tree the command has not touched yet
 * (a plain origin's, private-repo.ts): its entries from this second on are
 * checked before git next uses it, or, with the first index off, distrusted
 * now, so git reads those files again.
 */
export async function trustFreshIndex(indexPath: string, treeMade?: number): Promise<void> {
  const now = Date.now()
  if (!firstIndexOn()) {
    await distrustRecentEntries(indexPath, now)
    return
  }
  markForCheck(indexPath, Math.floor(now / 1000), treeMade)
  dateAfterEntries(indexPath, now)
}

/**
 * git takes an entry whose mtime is not older (to the second) than the
 * index file for "racily clean", and `git add` hashes its file again and
 * writes its blob: for a plain origin, a copy of every file written in the
 * second before the run, and the first diff's time would depend on which
 * second the clone finished in. The mark's check covers those entries
 * instead (their ctimes, to the nanosecond), so the index is dated just
 * after its newest entry. Entries dated in the future stay racy, as git has
 * them.
 */
function dateAfterEntries(indexPath: string, nowMs: number): void {
  const parsed = parseIndex(readFileSync(indexPath), objectFormatOf(indexPath))
  if (parsed) dateAfter(indexPath, parsed.newestMtime(Math.floor(nowMs / 1000)))
}

/** Dates the index file after the second `newestSec`, if it is not already. */
function dateAfter(indexPath: string, newestSec: number): void {
  const written = statSync(indexPath)
  if (newestSec >= Math.floor(written.mtimeMs / 1000)) utimesSync(indexPath, written.atime, newestSec + 1)
}

const MARK = '.check-from'
const markerOf = (indexPath: string) => `${indexPath}${MARK}`

/** A mark's lines after its first: one per command started since it was made, then the stamp of a check that stands. */
const STARTED = '+'
const CHECKED = 'checked'

/**
 * Says that the index's entries whose ctime falls in `second` or later are
 * to be checked to the nanosecond before git next uses it (the index was
 * just written, before the command started). `treeMade` (ms), when given:
 * a ctime before it is the tree's as made, never the command's (whose
 * ctimes are all later: afterTreeMade), so git's `add` need not distrust it
 * (distrustAfterAdd).
 */
export function markForCheck(indexPath: string, second: number, treeMade?: number): void {
  writeFileSync(markerOf(indexPath), treeMade === undefined ? `${second}\n` : `${second} ${treeMade}\n`)
}

interface Mark {
  /** The marked second (NaN: unreadable). */
  second: number
  /** The instant the tree was made (ms), if known. */
  treeMade?: number
  /** Whether the check of the end of the workspace's first command stands: no command started since it was stamped. */
  checked: boolean
  /** Whether it may still be stamped: no command started since the mark was made. */
  stampable: boolean
}

/** The mark's text as written: the marked second and the instant the tree was made, then STARTED and CHECKED lines. */
function parseMark(text: string): Mark {
  const [first, ...after] = text.split('\n').slice(0, -1)
  const [second, treeMade] = (first ?? '').split(' ').map(word => Number.parseInt(word, 10))
  return {
    second: Number.isInteger(second) ? second : Number.NaN,
    treeMade: Number.isInteger(treeMade) ? treeMade : undefined,
    checked: after.length === 1 && after[0] === CHECKED,
    stampable: after.length === 0,
  }
}

/** The mark of the index; undefined: none. */
function markOf(indexPath: string): Mark | undefined {
  try {
    return parseMark(readFileSync(markerOf(indexPath), 'utf8'))
  } catch (error) {
    if ((error as {code?: string}).code === 'ENOENT') return undefined
    throw error
  }
}

/** Appends a line to a mark, never making one: a mark gone is a second over. */
function appendToMark(marker: string, line: string): void {
  let fd: number
  try {
    fd = openSync(marker, constants.O_WRONLY | constants.O_APPEND)
  } catch (error) {
    if ((error as {code?: string}).code === 'ENOENT') return
    throw error
  }
  try {
    // One write, appended whole (O_APPEND): lines of two processes never mix.
    writeSync(fd, `${line}\n`)
  } finally {
    closeSync(fd)
  }
}

/**
 * Before a command starts in the workspace whose private repository is
 * `gitDir` (hmm exec): each mark there says so, so that a stamp made before
 * no longer stands for what it may write in the marked second, and one a
 * check still to come would make is void (its mark no longer holds its
 * first line alone). Called before the helper starts: nothing it runs
 * writes before the line is there.
 */
export function noteCommandStart(gitDir: string): void {
  let names: string[]
  try {
    names = readdirSync(gitDir)
  } catch {
    return // No private repository: no marks.
  }
  for (const name of names) if (name.endsWith(MARK)) appendToMark(join(gitDir, name), STARTED)
}

/** Private repositories whose workspace nothing can write any more unless a command starts (commandsOver). */
const over = new Set<string>()

/**
 * Says that no process of the workspace whose private repository is
 * `gitDir` runs any more, nor will but a command started later (which
 * says so: noteCommandStart): its command ran in a PID namespace of its own,
 * which ended everything with it, and nothing holds its lock. The checks
 * made from now on in this process may then be stamped: they saw every
 * change made in the marked second.
 */
export function commandsOver(gitDir: string): void {
  over.add(gitDir)
}

/**
 * Makes git re-read, next time, every file whose stat data it may have
 * taken in the second `sinceMs` falls in or later (index-trust.ts), but for
 * those whose ctime is from before the tree was made: no write of the
 * command's gave it, and the mark still covers their second (an entry of a
 * later second is not from before the tree was made), so the check sees
 * any change the command made since, to the nanosecond. Without that, a
 * command ending in the second the clone finished in would have the first
 * diff read again every file cloned in that second.
 */
export async function distrustAfterAdd(
  indexPath: string,
  sinceMs: number,
  seen?: (parsed: ParsedIndex) => void,
): Promise<{index: 'kept' | 'removed'; datedAfter?: number}> {
  const mark = firstIndexOn() ? markOf(indexPath) : undefined
  if (mark?.treeMade === undefined || !Number.isInteger(mark.second)) return {index: await distrustRecentEntries(indexPath, sinceMs, seen)}
  const madeSec = Math.floor(mark.treeMade / 1000)
  const madeNsec = (mark.treeMade % 1000) * 1_000_000
  const fromTree = (entry: IndexEntry) => {
    const ctime = entry.word(CTIME_SEC)
    return ctime >= mark.second && (ctime < madeSec || (ctime === madeSec && entry.word(CTIME_NSEC) < madeNsec))
  }
  let datedAfter: number | undefined
  const index = await rewriteLocked(
    indexPath,
    parsed => {
      seen?.(parsed)
      return distrustEntries(
        parsed,
        parsed.changedSince(Math.floor(sinceMs / 1000)).filter(entry => !fromTree(entry)),
      )
    },
    // Not racily clean either, as git would have the entries written in the second it wrote the index (see
    // dateAfterEntries): whatever changes a file from now on gives it a ctime of a later second than any left trusted,
    // or, in the marked second, the check sees it. The caller dates it so again after git rewrites it (write-tree).
    parsed => (datedAfter = parsed.newestMtime(Math.floor(Date.now() / 1000))),
  )
  return {index, datedAfter}
}

/**
 * The check (markForCheck asked for it): entries from the marked second on whose
 * file git would take as recorded, comparing times to the second, but is
 * not exactly (ctime or mtime differ in their nanoseconds) are made to
 * mismatch. The mark goes once that second is over: any later change gets a
 * later second, which git sees itself. A check stamped by the end of the
 * workspace's first command stands for this one while no command started
 * since (commandsOver).
 */
export async function checkFirstIndex(indexPath: string, tree: string): Promise<void> {
  const marker = markerOf(indexPath)
  // Read before the files are looked at: a command that starts after says so in the mark, after this.
  const mark = markOf(indexPath)
  if (!mark) return
  const {second} = mark
  const now = Date.now()
  const secondOver = !Number.isInteger(second) || Math.floor(now / 1000) > second
  if (mark.checked && Number.isInteger(second)) {
    debug('the entries cloned in the second the command started were checked when it ended, and nothing wrote since')
  } else {
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
  }
  if (secondOver) rmSync(marker, {force: true})
  // Nothing wrote since the mark was read but what this check saw: it stands until a command starts (its line then
  // comes before or after the stamp, which voids it either way).
  else if (mark.stampable && over.has(dirname(indexPath))) appendToMark(marker, CHECKED)
}
