// Making the workspace tree: a copy-on-write clone of the origin.
//
// Linux: the helper's parallel clone (FICLONE, falling back to
// copy_file_range, from several threads). macOS: cp -c (clonefile).
import {constants, copyFileSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync, type Dirent} from 'node:fs'
import {isAbsolute, join, relative} from 'node:path'
import {HmmError, debug, say} from '../ui/errors.js'
import {excludedAmong, helperPath, StatPairs, removeTree} from '../native/helper.js'
import {runCollected} from './collected.js'
import {runsOn} from './index.js'
import {programPath} from './programs.js'

export interface CloneOptions {
  /** Called with cumulative counts while cloning (for progress display). */
  onProgress?: (files: number, bytes: number) => void
  signal?: AbortSignal
  /**
   * Relative paths (NUL-terminated) whose stat data on both sides is wanted
   * right after the clone; the helper's clone answers them as it copies.
   */
  statPaths?: {names: Buffer; count: number}
  /**
   * The config file's `exclude` (native-helpers/exclude.c): `patterns`, a
   * file of them; `leftOut`, where the clone names what it left out.
   */
  exclude?: {patterns: string; leftOut: string}
}

/** What the clone left out by the config file's `exclude`, a directory with a trailing `/`, sorted. */
export function leftOutBy(exclude: {leftOut: string}): string[] {
  return readFileSync(exclude.leftOut, 'utf8').split('\0').filter(Boolean).sort()
}

/**
 * macOS: cp copies everything, so what `exclude` names is removed from the
 * copy before the command starts, and named as the helper's clone names it.
 */
function removeExcluded(destination: string, exclude: {patterns: string; leftOut: string}): void {
  // Directories as `dir/`, which the helper takes as directories.
  const paths = readdirSync(destination, {recursive: true, withFileTypes: true}).map(entry => {
    const path = join(entry.parentPath, entry.name).slice(destination.length + 1)
    return entry.isDirectory() ? `${path}/` : path
  })
  const out = new Set(excludedAmong(exclude.patterns, paths))
  // The highest only: nothing below an excluded directory is named again.
  const above = (path: string) => path.replace(/\/$/, '').split('/').slice(0, -1)
  const highest = [...out].filter(path => !above(path).some((_, depth, names) => out.has(`${names.slice(0, depth + 1).join('/')}/`)))
  for (const path of highest) rmSync(join(destination, path), {recursive: true, force: true})
  writeFileSync(exclude.leftOut, highest.map(path => `${path}\0`).join(''))
}

/** macOS: clonefile(2) of the whole tree through cp -c (APFS), a plain copy elsewhere. */
async function cloneOnDarwin(source: string, destination: string): Promise<void> {
  for (const flags of [['-c', '-pR'], ['-pR']]) {
    const result = await runCollected(programPath('cp') ?? 'cp', [...flags, source, destination])
    if (result.exitCode === 0) return
    removeTree(destination)
    if (flags.length === 1) throw new HmmError(`could not clone ${source}: ${result.stderr.trim().split('\n').at(-1)}`)
  }
}

/**
 * Clones source into destination (which must not exist). Returns the stat
 * pairs asked for in options.statPaths, or undefined where the clone cannot
 * answer them (macOS: cp): then ask the helper's stat-pairs.
 */
export async function cloneTree(source: string, destination: string, options: CloneOptions = {}): Promise<StatPairs | undefined> {
  const exclude = options.exclude
  if (runsOn('darwin')) {
    await cloneOnDarwin(source, destination)
    if (exclude) removeExcluded(destination, exclude)
    return undefined
  }
  const stats = options.statPaths
  const file = helperPath()
  const args = [
    'clone',
    ...(options.onProgress ? ['--progress-fd', '3'] : []),
    ...(stats ? ['--stat-pairs'] : []),
    ...(exclude ? ['--exclude-from', exclude.patterns, '--excluded-to', exclude.leftOut] : []),
    source,
    destination,
  ]
  debug(`clone: ${file} ${args.join(' ')}`)
  let pending = ''
  const onProgress = (chunk: Buffer) => {
    pending += chunk.toString()
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    const last = lines.reverse().find(line => line.startsWith('P '))
    if (last) {
      const [, files, bytes] = last.split(' ')
      options.onProgress!(Number(files), Number(bytes))
    }
  }
  const result = await runCollected(file, args, {input: stats?.names, onFd3: options.onProgress && onProgress, signal: options.signal})
  // Notes (e.g. a skipped socket) are passed on; the clone still succeeded.
  if (result.exitCode === 0) {
    for (const line of result.stderr.split('\n').filter(Boolean)) say(line.replace(/^hmm: /, ''))
    // The stat pairs are binary: a last record ending in 0x0a (a size of 10) is not a final newline.
    return stats && StatPairs.of(result.stdout, stats.count)
  }
  const reason =
    result.stderr
      .trim()
      .split('\n')
      .at(-1)
      ?.replace(/^hmm: (clone: )?/, '') || (result.exitCode === null ? 'ended by a signal' : `exit status ${result.exitCode}`)
  throw new HmmError(`could not clone ${source}: ${reason}${exclude ? leaveOut(source, reason, exclude.patterns) : ''}`)
}

/**
 * For a place of the tree the user may not read (a database's volume owned
 * by its container's user, say): how to leave it out of the clone. The
 * config's `exclude` replaces the patterns in force (`patterns`, a file of
 * them), so all of them are given with the new one.
 */
function leaveOut(source: string, reason: string, patterns: string): string {
  const denied = /^(.+): Permission denied$/.exec(reason)?.[1]
  const place = denied && isAbsolute(denied) ? relative(source, denied) : ''
  if (place === '' || place.startsWith('..') || isAbsolute(place)) return ''
  const exclude = [...readFileSync(patterns, 'utf8').split('\n').filter(Boolean), `/${place}`]
  return ` (to leave it out, put exclude = [${exclude.map(pattern => JSON.stringify(pattern)).join(', ')}] in hmm's config file)`
}

/** How many directories to look through for a file to try a clone of: the first few hold one in any real project. */
const PROBE_DIRECTORIES = 64

/** A non-empty regular file under root (links not followed), or undefined. */
function someFile(root: string): string | undefined {
  const queue = [root]
  for (let looked = 0; looked < queue.length && looked < PROBE_DIRECTORIES; looked++) {
    let entries: Dirent[]
    try {
      entries = readdirSync(queue[looked], {withFileTypes: true})
    } catch {
      continue
    }
    for (const entry of entries) {
      const path = join(queue[looked], entry.name)
      if (entry.isFile() && (lstatSync(path, {throwIfNoEntry: false})?.size ?? 0) > 0) return path
      if (entry.isDirectory()) queue.push(path)
    }
  }
  return undefined
}

/**
 * Whether files of `origin` cloned into `dir` share their blocks
 * (copy-on-write), tried on one file of the origin: the helper falls back to
 * a plain copy where the file system cannot (ext4, or another file system).
 */
export function sharesBlocks(origin: string, dir: string): boolean {
  const file = someFile(origin)
  if (!file) return true // nothing to copy: the clone took no space
  const probe = join(dir, 'cow-probe')
  try {
    copyFileSync(file, probe, constants.COPYFILE_FICLONE_FORCE)
    return true
  } catch {
    return false
  } finally {
    rmSync(probe, {force: true})
  }
}
