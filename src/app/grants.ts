// The paths the command is granted to write, checked before anything is
// made: none may be one the command's own places already stand for, nor
// lead wherever a command of an earlier run chose, nor hold what hmm reads
// outside the sandbox later.
import {readlinkSync, statSync} from 'node:fs'
import {filesGitReads} from '../git/config-files.js'
import {configPath} from '../sandbox/config.js'
import {canonical, isWithin, linksOnTheWay} from '../sandbox/paths.js'
import type {SandboxPolicy} from '../sandbox/policy.js'
import {HmmError} from '../ui/errors.js'

/**
 * Refuses a path to write at or inside hmm's data directory (any of the
 * places it may be: platform dataPlaces), as the user named it: `given`
 * with -w, `configured` in the config file. The workspace's bookkeeping
 * lies there (its private repository, whose config git outside runs, its
 * lock, the registry), and the sandbox only ever grants the workspace's
 * own tree of it.
 */
export function checkNotDataDirectory(dataPlaces: string[], grants: {given: string[]; configured: string[]}): void {
  const named = [
    ...grants.given.map(path => ({what: `-w ${path}`, path})),
    ...grants.configured.map(path => ({what: `write ${path} in the config file`, path})),
  ]
  for (const {what, path} of named) {
    const at = canonical(path)
    const data = dataPlaces.find(place => isWithin(at, place))
    if (data) throw new HmmError(`${what} is ${at === data ? '' : 'inside '}hmm's data directory, which the command may never write`)
  }
}

/**
 * Refuses a path to write in a temporary directory the namespaces make the
 * command's own (/tmp, $TMPDIR): the command sees its own there, so the
 * user's cannot be shared with it, and the grant would only name what the
 * command itself left at that path in an earlier run.
 */
export function checkNotInOwnTemp(policy: SandboxPolicy, writable: string[]): void {
  for (const path of writable) {
    const temp = policy.isolation?.temp.find(dir => isWithin(path, dir))
    if (temp) throw new HmmError(`${path} cannot be shared: the sandboxed command has a ${temp} of its own; share a directory outside it`)
  }
}

/**
 * Where what the command writes lands in the user's own files rather than
 * in a place of its own kept with the workspace: opted out of the
 * namespaces (and on macOS) every writable path and the devices (/dev/shm
 * is the user's); with them, the writable paths outside its own /tmp and
 * caches (native-helpers/mounts.c).
 */
export function writtenInPlace(policy: SandboxPolicy, namespaces: boolean): string[] {
  const isolation = namespaces ? policy.isolation : undefined
  if (!isolation) return [...policy.writable, ...policy.devices]
  const own = [...isolation.temp, ...isolation.caches]
  return policy.writable.filter(path => !own.some(dir => isWithin(path, dir)))
}

/** Of the places, the closest one holding `path`, if any. */
function closestHolding(places: string[], path: string): string | undefined {
  return places.filter(dir => isWithin(path, dir)).sort((a, b) => b.length - a.length)[0]
}

/**
 * Refuses a path to write (-w, the config file's `write`, the user's
 * $TMPDIR) reached through a symbolic link that lies where the command
 * writes in place: hmm grants where a link leads when the policy is made,
 * and a command of an earlier run may have put it there to make the next
 * one's grant its choice (issue 10: ~/.cache/pip or $TMPDIR in /tmp
 * replaced by a link to the home). A link put there after this check
 * grants nothing: the helper opens every grant through no link.
 */
export function checkNoLinkOnTheWay(policy: SandboxPolicy, namespaces: boolean, grants: {write: string[]; tmpdir: string}): void {
  const places = writtenInPlace(policy, namespaces)
  const named = [...grants.write.map(path => ({what: path, path})), {what: `$TMPDIR ${grants.tmpdir}`, path: grants.tmpdir}]
  for (const {what, path} of named) {
    for (const link of linksOnTheWay(path).slice(0, -1)) {
      // The closest: the one the link was made in, rather than one that holds it only because a grant leads there now.
      const place = closestHolding(places, link)
      if (!place) continue
      throw new HmmError(
        `${what} is reached through the symbolic link ${link} (to ${readlinkSync(link)}) in ${place}, which the sandboxed command could write: a command may have made it; remove the link, or give the path it should lead to`,
      )
    }
  }
}

/** Refuses where `path`, or a link on the way to it, lies in one of the places; a device (/dev/null) holds nothing. */
function refuseWithin(places: string[], what: string, path: string, why: string): void {
  const way = linksOnTheWay(path)
  if (statSync(way[way.length - 1], {throwIfNoEntry: false})?.isCharacterDevice()) return
  for (const [index, location] of way.entries()) {
    const place = closestHolding(places, location)
    if (!place) continue
    const how = index === way.length - 1 ? 'is' : 'is reached through'
    throw new HmmError(`${what} ${how} ${location}, which the sandboxed command could write (${place}); ${why}: do not let it write ${place}, or move it`)
  }
}

/**
 * Refuses where the command would write in place what hmm, or the git it
 * runs outside the sandbox, reads later (attacker's review 9, F1 and F9):
 * hmm's config file (the sandbox of every later run), the repository of
 * `origin` and git's configuration (git/config-files.ts: hmm diff runs the
 * core.pager set there, hmm merge's commit the gpg.program). A -w path
 * over the origin, or opted out of the namespaces an origin in /tmp or a
 * cache, is refused here.
 */
export async function checkReadsOutOfReach(policy: SandboxPolicy, namespaces: boolean, origin: string): Promise<void> {
  const places = writtenInPlace(policy, namespaces)
  if (places.length === 0) return
  refuseWithin(places, "hmm's config file", configPath(), 'what it put there would apply to every later run')
  const {repository, configuration} = await filesGitReads(origin)
  const why = 'git outside the sandbox would run what it put there'
  for (const path of repository) refuseWithin(places, `the repository of ${origin}`, path, why)
  for (const path of configuration) refuseWithin(places, "git's configuration", path, why)
}
