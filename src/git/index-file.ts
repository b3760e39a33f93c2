// Git's index file (versions 2 and 3), read and rewritten just enough to
// replace the stat data of entries. Format: Documentation/gitformat-index.txt.
//
// Why: the workspace's private index starts as the fork's, whose stat data
// describes the origin's files. Every cloned file has a new inode and ctime,
// so git would re-read the whole tree on the first diff. Where the origin's
// file provably did not change since git hashed it, the clone holds the same
// bytes, and the entry can take the clone's stat data instead: then only
// files the command touches are read. The command cannot forge what git
// checks (ctime and inode change with every write or replacement, whatever
// it does to mtime and size) — except within one second, git comparing
// times to the second: index-trust.ts sees to that.
import {createHash} from 'node:crypto'
import {STAT_WORDS, type StatKind} from '../native/helper.js'

const HEADER = 12
/** Word numbers of the stat data, whose layout the helper's stat records share (STAT_WORDS). */
const wordOf = (name: StatWord) => STAT_WORDS.indexOf(name)
export const [CTIME_SEC, CTIME_NSEC, MTIME_SEC, MTIME_NSEC, MODE, SIZE] = (['ctimeSec', 'ctimeNsec', 'mtimeSec', 'mtimeNsec', 'mode', 'size'] as const).map(
  wordOf,
)
/** What git compares to decide a file is unchanged: all but dev (as git does) and mode; nanoseconds apart. */
const UNCHANGED_WHEN = (['ctimeSec', 'mtimeSec', 'ino', 'uid', 'gid', 'size'] as const).map(wordOf)
const NANOSECONDS = (['ctimeNsec', 'mtimeNsec'] as const).map(wordOf)
const FILE_TYPE = 0o170000
const REGULAR = 0o100000
const SYMLINK = 0o120000
const GITLINK = 0o160000
/** ctime, mtime (s + ns each), dev, ino, mode, uid, gid, size: ten 32-bit fields. */
const STAT_BYTES = 40
/** Object names and the file's checksum are of the repository's hash. */
export type ObjectFormat = 'sha1' | 'sha256'
const HASH_BYTES: Record<ObjectFormat, number> = {sha1: 20, sha256: 32}
const FLAG_EXTENDED = 0x4000
const NAME_MASK = 0x0fff

type StatWord = (typeof STAT_WORDS)[number]
export type IndexStat = Record<StatWord, number>

/**
 * A view of a buffer's bytes for reading and writing big-endian words. The
 * passes over every entry run once per process, before V8 optimises them:
 * there DataView's methods (built in) cost a third of Buffer's (JavaScript).
 */
export const wordsOf = (buffer: Buffer) => new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)

export class IndexEntry {
  constructor(
    private readonly buffer: Buffer,
    private readonly words: DataView,
    /** Byte offset of the entry's stat data in the file. */
    readonly offset: number,
    readonly nameStart: number,
    readonly nameEnd: number,
  ) {}

  /** The n-th 32-bit word of the stat data (in STAT_WORDS's order, which is the file's). */
  word(n: number): number {
    return this.words.getUint32(this.offset + 4 * n)
  }

  /** All ten fields at once (tests, debugging); passes over every entry read single words instead. */
  get stat(): IndexStat {
    return Object.fromEntries(STAT_WORDS.map((name, n) => [name, this.word(n)])) as IndexStat
  }

  /** What git recorded: a regular file, a symbolic link, or something else (a submodule). */
  get kind(): StatKind {
    const type = this.word(MODE) & FILE_TYPE
    return type === REGULAR ? 'file' : type === SYMLINK ? 'symlink' : 'other'
  }

  get path(): string {
    return this.buffer.toString('utf8', this.nameStart, this.nameEnd)
  }
}

/**
 * An index read just enough to change entries' stat data. The entries'
 * places are kept in typed arrays; IndexEntry objects are made only when
 * asked for (a pass over 100,000 of them costs more than the rest).
 */
export class ParsedIndex {
  private readonly words: DataView

  constructor(
    readonly buffer: Buffer,
    /** Byte offset of each entry's stat data, and of its name's first and after-last byte, in index order. */
    private readonly offsets: Uint32Array,
    private readonly nameStarts: Uint32Array,
    private readonly nameEnds: Uint32Array,
    /** Where the extensions start (the checksum follows them). */
    readonly extensionsOffset: number,
    readonly format: ObjectFormat,
  ) {
    this.words = wordsOf(buffer)
  }

  get count(): number {
    return this.offsets.length
  }

  /** The entries whose ctime seconds are `sinceSec` or later. */
  changedSince(sinceSec: number): IndexEntry[] {
    const found: IndexEntry[] = []
    for (let index = 0; index < this.offsets.length; index++) {
      if (this.words.getUint32(this.offsets[index]) >= sinceSec) found.push(this.entry(index))
    }
    return found
  }

  /** The newest mtime, in seconds, of the entries whose mtime is not after `notAfterSec` (0: none). */
  newestMtime(notAfterSec: number): number {
    let newest = 0
    for (const offset of this.offsets) {
      const mtime = this.words.getUint32(offset + 4 * MTIME_SEC)
      if (mtime <= notAfterSec && mtime > newest) newest = mtime
    }
    return newest
  }

  /**
   * Every entry's path, as `git ls-files -z` lists them; undefined for a
   * split index (its entries' names are in another file) and a sparse one
   * (whose directories ls-files expands).
   */
  paths(): string[] | undefined {
    if (!keptExtensions(this)) return undefined
    return Array.from(this.offsets, (_, index) => this.buffer.toString('utf8', this.nameStarts[index], this.nameEnds[index]))
  }

  /** The gitlinks (nested repositories, submodules): path and the commit recorded. */
  gitlinks(): Array<{path: string; id: string}> {
    const found: Array<{path: string; id: string}> = []
    for (let index = 0; index < this.offsets.length; index++) {
      const offset = this.offsets[index]
      if ((this.words.getUint32(offset + 4 * MODE) & FILE_TYPE) !== GITLINK) continue
      const id = this.buffer.toString('hex', offset + STAT_BYTES, offset + STAT_BYTES + HASH_BYTES[this.format])
      found.push({path: this.buffer.toString('utf8', this.nameStarts[index], this.nameEnds[index]), id})
    }
    return found
  }

  get entries(): IndexEntry[] {
    return Array.from(this.offsets, (_, index) => this.entry(index))
  }

  private entry(index: number): IndexEntry {
    return new IndexEntry(this.buffer, this.words, this.offsets[index], this.nameStarts[index], this.nameEnds[index])
  }
}

/**
 * Parses versions 2 and 3 of an index of a repository of the given object
 * format; undefined for anything else (version 4, a split index, damage).
 */
export function parseIndex(buffer: Buffer, format: ObjectFormat): ParsedIndex | undefined {
  const HASH = HASH_BYTES[format]
  if (buffer.length < HEADER + HASH || buffer.toString('latin1', 0, 4) !== 'DIRC') return undefined
  const words = wordsOf(buffer)
  const version = words.getUint32(4)
  if (version !== 2 && version !== 3) return undefined
  const count = words.getUint32(8)
  const end = buffer.length - HASH
  // More entries than bytes allow is a lie: refuse before allocating for it.
  if (count > (end - HEADER) / (STAT_BYTES + HASH + 2)) return undefined
  const offsets = new Uint32Array(count)
  const nameStarts = new Uint32Array(count)
  const nameEnds = new Uint32Array(count)
  let offset = HEADER
  for (let index = 0; index < count; index++) {
    if (offset + STAT_BYTES + HASH + 2 > end) return undefined
    const flags = words.getUint16(offset + STAT_BYTES + HASH)
    let nameStart = offset + STAT_BYTES + HASH + 2
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return undefined
      nameStart += 2
    }
    // The length is in the flags unless it is 4095 or more: then look for the NUL.
    const nameEnd = (flags & NAME_MASK) === NAME_MASK ? buffer.indexOf(0, nameStart) : nameStart + (flags & NAME_MASK)
    if (nameEnd < nameStart || nameEnd >= end || buffer[nameEnd] !== 0) return undefined
    offsets[index] = offset
    nameStarts[index] = nameStart
    nameEnds[index] = nameEnd
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    offset += (nameEnd - offset + 8) & ~7
  }
  return new ParsedIndex(buffer, offsets, nameStarts, nameEnds, offset, format)
}

/**
 * Extensions kept: only the cached trees (TREE), which depend on object
 * names alone. Others (untracked cache, fsmonitor, split index, ...) hold
 * stat data or links of the origin's; a split or sparse index is not
 * rewritten at all.
 */
function keptExtensions(parsed: ParsedIndex): Buffer[] | undefined {
  const {buffer} = parsed
  const end = buffer.length - HASH_BYTES[parsed.format]
  const kept: Buffer[] = []
  for (let offset = parsed.extensionsOffset; offset < end;) {
    if (offset + 8 > end) return undefined
    const signature = buffer.toString('latin1', offset, offset + 4)
    const size = buffer.readUInt32BE(offset + 4)
    if (offset + 8 + size > end) return undefined
    if (signature === 'link' || signature === 'sdir') return undefined
    if (signature === 'TREE') kept.push(buffer.subarray(offset, offset + 8 + size))
    offset += 8 + size
  }
  return kept
}

/**
 * A new index: a copy of the entries, changed in place by `edit` (an entry
 * keeps its offset), with the kept extensions and a new checksum; undefined
 * if the index cannot be rewritten safely. Works on bytes, no object per
 * entry: it runs over every file of the tree.
 */
export function rewriteIndex(parsed: ParsedIndex, edit: (entries: Buffer) => void): Buffer | undefined {
  const extensions = keptExtensions(parsed)
  if (!extensions) return undefined
  const length = parsed.extensionsOffset + extensions.reduce((sum, extension) => sum + extension.length, 0)
  const rewritten = Buffer.allocUnsafe(length + HASH_BYTES[parsed.format])
  let at = parsed.buffer.copy(rewritten, 0, 0, parsed.extensionsOffset)
  for (const extension of extensions) at += extension.copy(rewritten, at)
  edit(rewritten)
  createHash(parsed.format).update(rewritten.subarray(0, length)).digest().copy(rewritten, length)
  return rewritten
}

/** The entries' paths, each ended by a NUL, one after another (what the helper's stat-pairs reads). */
export function namesOf(parsed: ParsedIndex, entries: IndexEntry[]): Buffer {
  let length = 0
  for (const entry of entries) length += entry.nameEnd - entry.nameStart + 1
  const names = Buffer.alloc(length)
  let at = 0
  for (const entry of entries) {
    at += parsed.buffer.copy(names, at, entry.nameStart, entry.nameEnd) + 1
  }
  return names
}

/**
 * Git compares ctime and mtime to the second only (unless built with
 * USE_NSEC, which Debian's is not). So a file the command rewrites at the
 * same size within the same second as git last looked at it, putting its
 * mtime back, would look unchanged: its ctime second and inode are the same.
 * Any entry whose ctime falls in the second git started looking at the
 * files (or later) is therefore made to mismatch (ctime 0), so git reads it
 * again next time. Entries from earlier seconds are safe: any later write
 * moves their ctime to a later second.
 */
export function distrustCurrentSecond(parsed: ParsedIndex, sinceSec: number): Buffer | undefined {
  return distrustEntries(parsed, parsed.changedSince(sinceSec))
}

/** Makes the entries mismatch their files (ctime 0), so git reads them next time. */
export function distrustEntries(parsed: ParsedIndex, entries: IndexEntry[]): Buffer | undefined {
  if (entries.length === 0) return parsed.buffer
  return rewriteIndex(parsed, body => {
    for (const entry of entries) body.fill(0, entry.offset, entry.offset + 8) // ctime seconds and nanoseconds
  })
}

/**
 * How a file's stat data (its kind, and its words in the index's order)
 * compares with what the entry recorded: the same, times to the
 * nanosecond; the same as Debian's git (no USE_NSEC) compares, times to the
 * second only, so git would take the file as unchanged; or different.
 */
export function compareStat(entry: IndexEntry, kind: StatKind, word: (n: number) => number): 'exactly' | 'to-the-second' | 'different' {
  if (kind !== entry.kind) return 'different'
  for (const n of UNCHANGED_WHEN) if (word(n) !== entry.word(n)) return 'different'
  for (const n of NANOSECONDS) if (word(n) !== entry.word(n)) return 'to-the-second'
  return 'exactly'
}
