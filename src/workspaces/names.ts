// IDs and names of workspaces (SPEC "Words").
import {HmmError} from '../ui/errors.js'

/** Crockford-like: no i, l, o, u, so IDs are easy to read and type. */
export const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
export const ID_LENGTH = 6

const NAME_PATTERN = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/
/** Long enough for any real name, short enough to keep listings readable. */
const NAME_MAX = 64
/**
 * What git's check-ref-format refuses in a ref's component among the names
 * NAME_PATTERN lets through: `hmm pr` pushes the branch `hmm/<name>`.
 */
const NOT_A_BRANCH = /^\.|\.\.|\.$|\.lock$/

export function checkName(name: string): string {
  if (!NAME_PATTERN.test(name) || name === '.' || name === '..') {
    throw new HmmError(`a workspace's name is letters, digits, '-', '_' and '.', not starting with '-': ${name}`)
  }
  if (name.length > NAME_MAX) throw new HmmError(`a workspace's name is at most ${NAME_MAX} characters: ${name}`)
  if (NOT_A_BRANCH.test(name)) {
    throw new HmmError(`a workspace's name may not start with '.', hold '..', or end with '.' or '.lock' (git refuses it as a branch name): ${name}`)
  }
  return name
}

export function label(workspace: {id: string; name: string | null}): string {
  return workspace.name ? `${workspace.id} (${workspace.name})` : workspace.id
}
