// Turns a WS argument into a workspace (SPEC: a name of the working
// directory's workspaces, a whole ID of any, or the start of exactly one of
// the working directory's workspaces' IDs;
// no argument: the working directory's latest).
import {HmmError} from '../ui/errors.js'
import {ID_ALPHABET, ID_LENGTH} from './names.js'
import type {Store, WorkspaceRow} from './store.js'

const ID_PREFIX = new RegExp(`^[${ID_ALPHABET}]{1,${ID_LENGTH}}$`)
/** Long keys are no workspace of ours; keep the message readable. */
const SHOWN_KEY_MAX = 80

function shown(key: string): string {
  return key.length > SHOWN_KEY_MAX ? `${key.slice(0, SHOWN_KEY_MAX)}…` : key
}

export function resolveWorkspace(store: Store, origin: string, key: string | undefined): WorkspaceRow {
  if (key === undefined) {
    const latest = store.list(origin).at(-1)
    if (!latest) throw new HmmError(`${origin} has no workspaces`)
    return latest
  }
  const byName = key === '' ? undefined : store.list(origin).find(row => row.name === key)
  if (byName) return byName
  if (ID_PREFIX.test(key)) {
    const whole = store.get(key)
    if (whole) return whole
    // A prefix never reaches another directory's workspace (typed in the wrong directory).
    const matches = store.withIdPrefix(key).filter(row => row.origin === origin)
    if (matches.length === 1) return matches[0]
    if (matches.length > 1) throw new HmmError(`${key} is the start of more than one workspace's ID`)
  }
  throw new HmmError(`no workspace ${shown(JSON.stringify(key).slice(1, -1)) || "''"}`)
}
