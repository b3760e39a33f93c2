// The C helper (native-helpers/, main.c lists its modes), built by `npm install`: what
// Node cannot do itself — Landlock, flock held across exec, fast cloning,
// removal that no racing process can turn against files outside.
import type * as ChildProcess from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {debug, HmmError} from '../ui/errors.js'
import {mayExclude} from './may-exclude.js'

const RELATIVE = 'native-helpers/build/hmm-helper'

/**
 * Where the built helper is: found upwards from this module, which is
 * dist/native/helper.js, or dist/list.bundle.cjs once bundled.
 */
function locate(): string {
  for (const up of ['../..', '..']) {
    const candidate = join(import.meta.dirname, up, RELATIVE)
    if (existsSync(candidate)) return candidate
  }
  return join(import.meta.dirname, '../..', RELATIVE)
}

export const HELPER_PATH = locate()

/**
 * node:child_process, loaded when the helper first runs: listing mostly
 * does not run it, and loading the module (net, streams) is a seventh of
 * `hmm ls`'s time. Listing's other rare child (git/head-holds.ts) loads it here too.
 */
export function childProcess(): typeof ChildProcess {
  return process.getBuiltinModule('node:child_process')
}

export function helperPath(): string {
  if (!existsSync(HELPER_PATH)) {
    throw new HmmError(`the sandbox helper ${HELPER_PATH} is missing; run npm install in hmm's directory to build it`)
  }
  return HELPER_PATH
}

function runHelper(args: string[]): string {
  return childProcess().execFileSync(helperPath(), args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
}

/**
 * The bytes allocated under each directory (st_blocks, each inode once, links
 * never followed, one file system; what vanishes meanwhile is not counted):
 * native-helpers/usage.c. One lstat per entry.
 */
export function diskUsage(paths: string[]): number[] {
  if (paths.length === 0) return []
  return runHelper(['disk-usage', ...paths])
    .split('\n')
    .slice(0, paths.length)
    .map(Number)
}

/** Which layers of the sandbox this system gives (`hmm-helper layers`, tried for real). */
export interface Layers {
  /** The kernel's Landlock ABI version (0: none). */
  landlock: number
  /** Why a user namespace cannot be had (e.g. `unshare: No space left on device`), or null when it can. */
  namespaces: string | null
  /** Why a seccomp filter cannot be installed, or null when it can. */
  seccomp: string | null
  /** Run as root with the command's own places given: why its ids cannot be remapped (native-helpers/ids.c), or null when they can; undefined otherwise. */
  ids?: string | null
}

/** `ownPlaces`: as root, the command's home, hmm's data directory and -w places, for the ids' line. */
export function sandboxLayers(ownPlaces: string[] = []): Layers {
  return layersSaid(runHelper(['layers', ...ownPlaces]))
}

/** sandboxLayersSoon's answer: the helper is asked once per hmm process. */
let layersAsked: Promise<Layers> | undefined

/** sandboxLayers without waiting: what hmm works out meanwhile overlaps the helper's tries. */
export function sandboxLayersSoon(): Promise<Layers> {
  layersAsked ??= new Promise((resolve, reject) => {
    debug('asked the helper which sandbox layers this system has')
    childProcess().execFile(helperPath(), ['layers'], {encoding: 'utf8'}, (error, stdout) => (error ? reject(error) : resolve(layersSaid(stdout))))
  })
  return layersAsked
}

/** What `hmm-helper layers` printed, as Layers. */
function layersSaid(output: string): Layers {
  const said = new Map<string, string>()
  for (const line of output.split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0) said.set(line.slice(0, space), line.slice(space + 1))
  }
  const refusal = (layer: string) => {
    const answer = said.get(layer) ?? 'the helper did not say'
    return answer === 'ok' ? null : answer
  }
  return {
    landlock: Number.parseInt(said.get('landlock') ?? '', 10) || 0,
    namespaces: refusal('namespaces'),
    seccomp: refusal('seccomp'),
    ...(said.has('ids') ? {ids: refusal('ids')} : {}),
  }
}

/** Which of the lock files some process holds (without taking them). */
export function lockedFiles(paths: string[]): boolean[] {
  if (paths.length === 0) return []
  const lines = runHelper(['locked', ...paths]).split('\n')
  return paths.map((_, index) => lines[index] === '1')
}

/**
 * Whether something running in the workspace whose lock this is has more
 * network than a command with the host list marked `hostsMark`
 * (sandbox/policy.ts), or, without it, with none (native-helpers/marks.c).
 */
export function runsMoreNetwork(lock: string, hostsMark?: number): boolean {
  return runHelper(['marked', lock, ...(hostsMark === undefined ? [] : [String(hostsMark)])]).trim() === '1'
}

export type StopOutcome = 'stopped' | 'not-running' | 'still-running'

/**
 * Ends every process of the workspaces whose locks are given: SIGTERM to the
 * init of each one's PID namespace (or to what descends from its keeper),
 * SIGKILL 5 seconds later; waits for them. Linux only: elsewhere it throws.
 */
export function stopLocked(paths: string[]): StopOutcome[] {
  if (paths.length === 0) return []
  // The helper's own reason, in one line (on macOS: it cannot stop anything).
  const result = childProcess().spawnSync(helperPath(), ['stop', ...paths], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
  if (result.status !== 0) throw new HmmError(result.stderr.split('\n')[0].replace(/^hmm-helper: /, '') || `the helper's stop failed`)
  const lines = result.stdout.split('\n')
  return paths.map((_, index) => (lines[index] === '1' ? 'stopped' : lines[index] === '0' ? 'not-running' : 'still-running'))
}

/**
 * Deletes a directory tree of hmm's (a workspace, a failed clone) that a
 * process of the command may still be changing: the helper goes by directory
 * descriptors and never follows a link swapped in, where Node's rmSync, going
 * by paths, deletes through it (native-helpers/remove.c). A missing directory
 * is no error. Throws with the helper's first failure.
 */
export function removeTree(path: string): void {
  const result = childProcess().spawnSync(helperPath(), ['remove', path], {encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe']})
  if (result.status === 0) return
  const said = result.stderr.split('\n')[0].replace(/^hmm-helper: remove: /, '')
  throw new Error(said || `the helper's remove ${result.error?.message ?? `exited ${result.status ?? result.signal}`}`)
}

/**
 * Those of the relative paths (a tree's files: links and gitlinks as files)
 * that the patterns of `patterns` (the config file's `exclude`, gitignore's
 * syntax) exclude, themselves or by a directory above them
 * (native-helpers/exclude.c: the clone leaves out the same).
 */
export function excludedAmong(patterns: string, paths: string[]): string[] {
  if (!mayExclude(readFileSync(patterns, 'utf8'), paths)) return []
  const out = childProcess().execFileSync(helperPath(), ['excluded', patterns], {
    input: paths.map(path => `${path}\0`).join(''),
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  return out.split('\0').filter(Boolean)
}

/**
 * The stat data of each relative path under two roots (links not followed),
 * from the helper: two lstat calls per file of a big tree cost about a second
 * from Node, a fraction of that from C. The paths are given NUL-terminated,
 * one after another. Read the answer with StatPairs.
 */
export function statPairs(rootA: string, rootB: string, paths: {names: Buffer; count: number}): StatPairs {
  const out =
    paths.count === 0
      ? Buffer.alloc(0)
      : childProcess().execFileSync(helperPath(), ['stat-pairs', rootA, rootB], {
          input: paths.names,
          maxBuffer: paths.count * 2 * StatPairs.RECORD + 1024,
          stdio: ['pipe', 'pipe', 'pipe'],
        })
  return StatPairs.of(out, paths.count)
}

export type StatKind = 'missing' | 'file' | 'symlink' | 'other'
const KINDS: StatKind[] = ['missing', 'file', 'symlink', 'other']
/** The ten 32-bit words of a record, in the order of git's index. */
export const STAT_WORDS = ['ctimeSec', 'ctimeNsec', 'mtimeSec', 'mtimeNsec', 'dev', 'ino', 'mode', 'uid', 'gid', 'size'] as const

/**
 * The helper's answer, read in place (100,000 files make 200,000 records:
 * no object per record). Side 0 is ROOT_A, side 1 ROOT_B.
 */
export class StatPairs {
  static readonly RECORD = 41

  /** Read through a DataView: see git/index-file.ts wordsOf. */
  private readonly words: DataView

  constructor(private readonly buffer: Buffer) {
    this.words = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  }

  /** The answer for `count` paths, checked for its length. */
  static of(out: Buffer, count: number): StatPairs {
    if (out.length !== count * 2 * StatPairs.RECORD) {
      throw new HmmError(`the helper's stat pairs came to ${out.length} bytes for ${count} paths`)
    }
    return new StatPairs(out)
  }

  private at(index: number, side: 0 | 1): number {
    return StatPairs.RECORD * (2 * index + side)
  }

  kind(index: number, side: 0 | 1): StatKind {
    return KINDS[this.buffer[this.at(index, side)]] ?? 'other'
  }

  /** The n-th word (see STAT_WORDS) of a record. */
  word(index: number, side: 0 | 1, n: number): number {
    return this.words.getUint32(this.at(index, side) + 1 + 4 * n)
  }
}
