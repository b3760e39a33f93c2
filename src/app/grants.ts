// The paths the command is granted to write, checked before anything is
// made: none may be one the command's own places already stand for, nor
// lead wherever a command of an earlier run chose.
import {readlinkSync} from 'node:fs'
import {isWithin, linksOnTheWay} from '../sandbox/paths.js'
import type {SandboxPolicy} from '../sandbox/policy.js'
import {HmmError} from '../ui/errors.js'

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
function writtenInPlace(policy: SandboxPolicy, namespaces: boolean): string[] {
  const isolation = namespaces ? policy.isolation : undefined
  if (!isolation) return [...policy.writable, ...policy.devices]
  const own = [...isolation.temp, ...isolation.caches]
  return policy.writable.filter(path => !own.some(dir => isWithin(path, dir)))
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
      const place = places.filter(dir => isWithin(link, dir)).sort((a, b) => b.length - a.length)[0]
      if (!place) continue
      throw new HmmError(
        `${what} is reached through the symbolic link ${link} (to ${readlinkSync(link)}) in ${place}, which the sandboxed command could write: a command may have made it; remove the link, or give the path it should lead to`,
      )
    }
  }
}
