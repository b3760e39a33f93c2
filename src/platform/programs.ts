// The programs hmm runs outside the sandbox (SPEC "Sandbox", Writing): git,
// gh, the shell and cp it starts, and what runs hmm itself next time (the
// `hmm` and `node` on PATH, and the files they lead to). Each is found once
// per process, as an absolute path, and every later start uses that path.
//
// Security: a sandboxed command may write some places (caches, temp
// directories, -w paths). A program found there, or reached through a
// symbolic link there, could have been written by it, and hmm would run its
// code outside the sandbox, as the user (issue 10: ~/.cargo/bin/git, the hmm
// link in ~/.local/bin with -w ~/.local). So hmm refuses, naming the path,
// rather than run it.
import {accessSync, constants, realpathSync, statSync} from 'node:fs'
import {basename, delimiter, dirname, isAbsolute, join, resolve} from 'node:path'
import {HELPER_PATH} from '../native/helper.js'
import {everyWrite, loadConfig} from '../sandbox/config.js'
import {canonical, isWithin, linksOnTheWay} from '../sandbox/paths.js'
import {writableHolding, type WritePlaces} from '../sandbox/policy.js'
import {debug, HmmError} from '../ui/errors.js'
import {writePlacesFor} from './confine.js'
import {currentPlatform, dataDir} from './index.js'

/** Programs hmm starts outside the sandbox by name. */
export type Program = 'git' | 'gh' | 'sh' | 'cp'

/** The first executable file named `name` in the PATH's directories (absolute ones only: a relative one means the working directory). */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!isAbsolute(dir)) continue
    const candidate = join(dir, name)
    try {
      // Stat first, without throwing: most directories of PATH lack the name, and an exception for each costs more.
      if (!statSync(candidate, {throwIfNoEntry: false})?.isFile()) continue
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/**
 * Refuses when the program, or a link on the way to it, lies where the
 * sandboxed command could write, or where any workspace's command could:
 * hmm's data directory (every tree; PATH may lead into one, as direnv or a
 * virtualenv entered there does).
 */
function checkOutOfReach(what: string, path: string, policy: WritePlaces): void {
  const reach = {...policy, writable: [...policy.writable, canonical(dataDir())]}
  const way = linksOnTheWay(path)
  for (const [index, location] of way.entries()) {
    const writable = writableHolding(reach, location)
    if (!writable) continue
    const how = index === way.length - 1 ? 'is' : 'is reached through'
    throw new HmmError(`${what} ${how} ${location}, which the sandboxed command could write (${writable}); install ${what} elsewhere or change PATH`)
  }
}

/**
 * Where the sandboxed command writes in place: the places asked for by
 * name (-w, the config file's `write`, an agent's files), and those every
 * command writes without being asked where it has no namespaces (the
 * caches, the temporary directories). Canonical.
 */
export interface InPlace {
  asked: string[]
  unasked: string[]
}

/**
 * Refuses when a directory of PATH searched before the program's (every
 * one, where it is not installed) lies in a place the sandboxed command
 * writes in place, but in a part of it left read-only (`readOnly`: a
 * cache's program parts, ~/.cargo/bin): a program of that name it left
 * there would be found first from then on, after the workspace is gone too.
 */
function checkNotShadowed(what: string, found: string | undefined, inPlace: InPlace, readOnly: string[]): void {
  if (inPlace.asked.length + inPlace.unasked.length === 0) return
  const foundIn = found && dirname(found)
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue
    if (dir === foundIn) return
    const real = canonical(dir)
    if (readOnly.some(place => isWithin(real, place))) continue
    const asked = inPlace.asked.find(place => isWithin(real, place))
    const writable = asked ?? inPlace.unasked.find(place => isWithin(real, place))
    if (!writable) continue
    const before = found ? `before ${found}` : `(${what} is not installed)`
    const why = asked ? `${writable}` : `${writable}, written in place without the namespaces`
    const fix = asked ? `take ${dir} off PATH or do not make ${writable} writable` : `take ${dir} off PATH`
    throw new HmmError(
      `${what} is looked for in ${dir} ${before}, which the sandboxed command could write (${why}); a ${what} it left there would run outside: ${fix}`,
    )
  }
}

/** Refuses when a directory of hmm's own (or Node's) lies where the sandboxed command could write. */
function checkInstalledOutOfReach(what: string, path: string, policy: WritePlaces): void {
  const writable = writableHolding(policy, path)
  if (writable) throw new HmmError(`${what} is installed in ${path}, which the sandboxed command could write (${writable}); install ${what} elsewhere`)
}

const resolved = new Map<Program, string | undefined>()
const checked = new Set<Program>()

/** Where the program is: looked up on PATH the first time, the same path ever after. */
function found(name: Program): string | undefined {
  if (!resolved.has(name)) resolved.set(name, findOnPath(name))
  return resolved.get(name)
}

/**
 * What a command run with the defaults and the config file could have
 * written: the places a program is checked against when hmm did not check
 * it before starting a command itself (diff, apply, merge, pr, ...); of
 * the policy, only where it writes (what it may read and the searches
 * for it do not count here). The -w paths of earlier runs are not known
 * here: a run refuses a -w path where a program could be left to shadow
 * one of hmm's (checkNotShadowed).
 */
function defaultPolicy(): {policy: WritePlaces; inPlace: InPlace} {
  let write: string[] = []
  try {
    write = everyWrite(loadConfig()).map(canonical)
  } catch {
    // A bad config file is reported by the commands that read it; its paths cannot be known.
  }
  debug('checking the programs hmm runs against where a command with the defaults writes')
  return {policy: writePlacesFor(currentPlatform(), {dataDir: dataDir(), writable: write}), inPlace: {asked: write, unasked: []}}
}

/** defaultPolicy, built for the first program checked against it and kept for the others. */
let defaults: ReturnType<typeof defaultPolicy> | undefined

/** The absolute path of a program hmm runs outside the sandbox, or undefined where it is not installed. */
export function programPath(name: Program): string | undefined {
  const path = found(name)
  if (path && !checked.has(name)) {
    defaults ??= defaultPolicy()
    const {policy, inPlace} = defaults
    checkOutOfReach(name, path, policy)
    checkNotShadowed(name, path, inPlace, policy.readOnly)
    checked.add(name)
  }
  return path
}

/** hmm's install directory as a whole (the helper, the bundles, node_modules) and the Node running it. */
function checkHmmOutOfReach(policy: WritePlaces): void {
  checkInstalledOutOfReach('hmm', realpathSync(join(dirname(HELPER_PATH), '..', '..')), policy)
  checkInstalledOutOfReach('node', realpathSync(process.execPath), policy)
}

/**
 * A program hmm runs outside before the command's policy is built (run
 * asks the origin's git while it is): checked against where the command
 * could write. checkProgramsOutOfReach checks it again with the rest
 * before the command starts.
 */
export function checkProgramFirst(name: Program, policy: WritePlaces): void {
  checkHmmOutOfReach(policy)
  const path = found(name)
  if (path) checkOutOfReach(name, path, policy)
  checked.add(name)
}

/**
 * Before a command starts: every program hmm runs outside, and what runs
 * hmm next time (the `hmm` and `node` on PATH, this hmm's files, this
 * node), out of the policy's reach, and not to be shadowed on PATH from
 * `inPlace`, the paths the command writes in place. The programs keep the
 * paths found now.
 */
export function checkProgramsOutOfReach(policy: WritePlaces, inPlace: InPlace): void {
  checkHmmOutOfReach(policy)
  const programs = ['git', 'gh', 'sh', 'cp'] as const
  for (const name of programs) {
    const path = found(name)
    if (path) checkOutOfReach(name, path, policy)
  }
  // What the user's next `hmm` runs: the link on PATH, the script as this one was started, the node its #! finds (each
  // looked up once: the shadowing check below asks again).
  const onPath = {hmm: findOnPath('hmm'), node: findOnPath('node')}
  const next: Array<[string, string | undefined]> = [
    ['hmm', onPath.hmm],
    ['hmm', process.argv[1]],
    ['node', onPath.node],
  ]
  for (const [what, path] of next) if (path) checkOutOfReach(what, path, policy)
  // Then what a program left in a writable directory would shadow.
  for (const name of programs) {
    checkNotShadowed(name, found(name), inPlace, policy.readOnly)
    checked.add(name)
  }
  // Where the user's shell finds no hmm or node, nothing of theirs is shadowed.
  for (const what of ['hmm', 'node'] as const) {
    const path = onPath[what]
    if (path) checkNotShadowed(what, path, inPlace, policy.readOnly)
  }
}

/**
 * The program of a command with an agent's profile (chosen by its base
 * name), found here, outside, before the namespaces and layers: on the
 * user's PATH, or the path given (from where the user is). The helper runs
 * it by that path. Looked up inside instead, it would be the first of that
 * name on PATH as the workspace shows it: one a command without the
 * profile left in a cache's layer (rustup puts ~/.cargo/bin first), which
 * would then start with the agent's login (attacker's review 5, F5).
 * Refused where it, or a link on the way to it, lies where a command of
 * the workspace could write: the policy's writable places and hmm's data
 * directory (every workspace's tree, temporary directory and layers). Not
 * found: as a shell says it, before anything is made.
 */
export function agentProgram(name: string, policy: WritePlaces): string {
  const path = name.includes('/') ? resolve(name) : findOnPath(name)
  if (!path) throw new HmmError(`${name}: command not found`, 127)
  checkOutOfReach(basename(name), path, policy)
  return path
}
