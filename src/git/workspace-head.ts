// The workspace's HEAD commit, read from its `.git` as plain files.
//
// Security: this runs outside the sandbox, so it must not run git on the
// workspace's repository (its config can run programs). Reading HEAD and
// refs as files executes nothing; links are not followed, so the command
// cannot make hmm read files outside its tree.
import {closeSync, constants, fstatSync, openSync, readSync} from 'node:fs'
import {join} from 'node:path'

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/**
 * A regular file's text, opened without following a link and without
 * waiting on a FIFO: undefined where it is not one (or not there), null
 * where it holds more than `max` bytes.
 */
export function readBoundedFile(path: string, max: number): string | null | undefined {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) return undefined
    if (stat.size > max) return null
    const buffer = Buffer.alloc(Number(stat.size))
    let offset = 0
    while (offset < buffer.length) {
      const read = readSync(fd, buffer, offset, buffer.length - offset, offset)
      if (read === 0) break
      offset += read
    }
    return buffer.subarray(0, offset).toString('utf8')
  } finally {
    closeSync(fd)
  }
}

/** Larger than any real HEAD or packed-refs file; a bigger one is not trusted. */
const MAX_REF_FILE = 256 << 20

/** A HEAD or ref file's text, or undefined: not a regular file, or larger than any real one. */
export function readRegularFile(path: string): string | undefined {
  return readBoundedFile(path, MAX_REF_FILE) ?? undefined
}

function safeRefName(name: string): boolean {
  return name.startsWith('refs/') && !name.split('/').some(part => part === '' || part === '.' || part === '..')
}

/**
 * The commit HEAD points at: an object ID, null when the branch has no
 * commits yet, or undefined when HEAD cannot be read (treated by callers as
 * "unknown", never as "unchanged").
 */
export function readWorkspaceHead(tree: string): string | null | undefined {
  const gitDir = join(tree, '.git')
  const head = readRegularFile(join(gitDir, 'HEAD'))?.trim()
  if (head === undefined) return undefined
  if (OBJECT_ID.test(head)) return head
  const match = /^ref: (\S+)$/.exec(head)
  if (!match || !safeRefName(match[1])) return undefined
  const ref = match[1]
  const loose = readRegularFile(join(gitDir, ref))?.trim()
  if (loose !== undefined) return OBJECT_ID.test(loose) ? loose : undefined
  const packed = readRegularFile(join(gitDir, 'packed-refs'))
  for (const line of packed?.split('\n') ?? []) {
    const [id, name] = line.split(' ')
    if (name === ref && OBJECT_ID.test(id)) return id
  }
  return null
}
