// The named unix sockets of the user's session, found when a command
// starts. Landlock does not mediate connect() to a socket by its path, so
// a server listening where the command can reach by name (a gpg-agent, GNU
// screen, an ssh ControlMaster, Docker Desktop, an editor's server) is
// reachable whatever Landlock hides; the helper covers each one found with
// /dev/null in the command's mount namespace (native-helpers/isolate.c).
import {lstatSync, readFileSync, readdirSync, type Dirent} from 'node:fs'
import {canonical, isWithin, unique} from './paths.js'

/**
 * How far the search goes: sessions keep their sockets shallow
 * (~/.screen/S-user/1234.pts-0.host, ~/.docker/desktop/docker.sock,
 * /run/screen/S-user/...), and a home directory holds trees of any size, so
 * it goes level by level, the shallow first, and stops after so many entries.
 */
export const SOCKET_SEARCH = {depth: 4, entries: 20000}

/** Directories no session keeps a socket in, and that can be huge. */
const NOT_SEARCHED = new Set(['node_modules', '.git', '.venv', '__pycache__'])

/**
 * File systems whose directories can make readdir wait for a server (a
 * dead sshfs or NFS mount would hang every hmm run), or mount on first
 * access: the search does not enter them.
 */
const REMOTE = /^(fuse|nfs|cifs|smb|9p|ceph|glusterfs|afs|davfs|autofs|lustre|gpfs|beegfs|orangefs)/

/** The mount points of such file systems, from /proc/self/mountinfo (spaces and such escaped as \ooo). */
function remoteMounts(): Set<string> {
  let text: string
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8')
  } catch {
    return new Set()
  }
  const unescape = (path: string) => path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
  const remote = new Set<string>()
  for (const line of text.split('\n')) {
    const [mount, fs] = line.split(' - ')
    if (fs && REMOTE.test(fs)) remote.add(unescape(mount.split(' ')[4]))
  }
  return remote
}

/**
 * Searched once per hmm process, by what was asked: besides the command's
 * policy, hmm's own confined programs (platform/confined.ts: `hmm run`'s
 * record of the work after the command, diff, merge) and the check of the
 * programs hmm runs outside (platform/programs.ts) build policies of their own.
 */
const searched = new Map<string, string[]>()

/**
 * The sockets beneath `roots`, `SOCKET_SEARCH` deep, not descending into
 * `skip` (canonical: the data directory, what is covered whole already),
 * remote or FUSE file systems, nor following links.
 */
export function socketsWithin(roots: string[], skip: string[]): string[] {
  const key = JSON.stringify([roots, skip])
  const known = searched.get(key)
  if (known) return known
  const found = search(roots, skip)
  searched.set(key, found)
  return found
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket()
  } catch {
    return false
  }
}

function search(roots: string[], skip: string[]): string[] {
  const found: string[] = []
  let budget = SOCKET_SEARCH.entries
  // Going down from the roots, a directory beneath a skipped one is never reached: the skipped one itself is met first.
  const skipped = new Set([...skip, ...remoteMounts()])
  // A root on a remote file system (a home directory on NFS) is searched: hmm needs it anyway.
  let level = unique(roots.map(canonical)).filter(root => !skip.some(dir => isWithin(root, dir)))
  for (let depth = 0; depth < SOCKET_SEARCH.depth && level.length > 0; depth++) {
    const next: string[] = []
    for (const dir of level) {
      let entries: Dirent[]
      try {
        entries = readdirSync(dir, {withFileTypes: true})
      } catch {
        // A place searched that is a socket itself (a file the composed home keeps); else gone, or not the user's to read
        // (then not to connect to either).
        if (depth === 0 && isSocket(dir)) found.push(dir)
        continue
      }
      const prefix = dir === '/' ? '/' : `${dir}/`
      for (const entry of entries) {
        if (--budget < 0) return found
        if (entry.isSocket()) found.push(prefix + entry.name)
        else if (entry.isDirectory() && !NOT_SEARCHED.has(entry.name)) {
          const path = prefix + entry.name
          if (!skipped.has(path)) next.push(path)
        }
      }
    }
    level = next
  }
  return found
}
