// What a workspace's commits take, against what `hmm diff` shows (SPEC
// merge: "never bring in a change that hmm diff does not show").
//
// hmm diff shows, per path, the fork tree (the origin's files when the
// workspace was made) against the workspace's files now. The commits take,
// per path, the origin's HEAD then (their base) against their tip. A path
// the commits touch is shown as taken only when:
// - the base is what the diff starts from (else the commits carry the
//   origin's own uncommitted work there, which the diff leaves out);
// - the commits change it at all (else they changed it and changed it
//   back: the diff shows nothing there);
// - the files hold exactly what the tip holds there (content, mode, being
//   there at all). Any change after the last commit counts, even one that
//   only adds lines: lines added around the commits' lines change what they
//   do (a heredoc or `#if 0` around them shows them disabled), and a line
//   put back as a look-alike shows a removal as a harmless edit.
// Everything here reads hmm's private repository only (the commits were
// fetched into it, objects of the origin borrowed).
import type {Workspace} from '../workspaces/workspace.js'
import {commitRange} from './bundle.js'
import {ALL_GITLINKS, git, gitBytes, gitLine, PLAIN_PATCH} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'
import {refusedAmong} from './refused-paths.js'
import type {Shown} from './text-shown.js'

function onPrivate(workspace: Workspace) {
  return {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
}

const nulSeparated = (text: string) => new Set(text.split('\0').filter(Boolean))

/** The paths whose entries differ between two trees (or commits). */
async function pathsBetween(workspace: Workspace, from: string, to: string): Promise<Set<string>> {
  const changed = await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--name-only', from, to], onPrivate(workspace))
  return nulSeparated(changed.stdout)
}

/** The base of the workspace's commits: the origin's HEAD when it was made, or the empty tree. */
async function baseOf(workspace: Workspace): Promise<string> {
  return workspace.row.headCommit ?? gitLine(['mktree'], {...onPrivate(workspace), input: ''})
}

/**
 * Why a path's change by the commits is not what hmm diff shows: the files
 * changed it after the last commit (`after`), or changed it back so that
 * hmm diff shows nothing there (`putBack`); the commits carry the origin's
 * own uncommitted change (`origin`); a commit changed it and a later one
 * changed it back (`undone`).
 */
export type UnshownWhy = 'after' | 'putBack' | 'origin' | 'undone'

/**
 * The paths the commits up to `tip` change whose change hmm diff does not
 * show as they make it, sorted, each with why; `nowTree` is the
 * workspace's files (treeNow). The paths are those any commit touches (merges against their
 * first parent: what they bring in) and those whose content at the tip is
 * not the base's: a commit made on an older commit of the origin, merged
 * with the origin's HEAD keeping its own side, takes back what the origin
 * did since without touching it in any first-parent diff.
 */
export async function unshownChanges(workspace: Workspace, tip: string, nowTree: string): Promise<Array<{path: string; why: UnshownWhy}>> {
  const touched = await git(
    ['log', ...ALL_GITLINKS, '-z', '--format=', '--name-only', '--no-renames', '--diff-merges=first-parent', ...(await commitRange(workspace, tip)), '--'],
    onPrivate(workspace),
  )
  const base = await baseOf(workspace)
  const [originUncommitted, changedSince, net, diffShows] = await Promise.all([
    pathsBetween(workspace, base, workspace.row.forkTree!),
    pathsBetween(workspace, tip, nowTree),
    pathsBetween(workspace, base, tip),
    pathsBetween(workspace, workspace.row.forkTree!, nowTree),
  ])
  const why = (path: string): UnshownWhy | undefined => {
    if (changedSince.has(path)) return diffShows.has(path) ? 'after' : 'putBack'
    if (originUncommitted.has(path)) return 'origin'
    return net.has(path) ? undefined : 'undone'
  }
  return [...new Set([...nulSeparated(touched.stdout), ...net])].sort().flatMap(path => {
    const reason = why(path)
    return reason ? [{path, why: reason}] : []
  })
}

/**
 * The paths, sorted, that some commit up to `tip` holds and git refuses
 * (refused-paths.ts): the origin's fetch would refuse their objects and
 * its checkout their paths, whatever the review says. Each commit's paths
 * are its first parent's and those its diff against it names (-t: trees
 * too, so an empty `.git` directory counts), from commits that start the
 * range (--root) on.
 */
export async function refusedPaths(workspace: Workspace, tip: string): Promise<string[]> {
  const named = await git(
    [
      'log',
      ...ALL_GITLINKS,
      '-z',
      '--format=',
      '--name-only',
      '--no-renames',
      '-t',
      '--root',
      '--diff-merges=first-parent',
      ...(await commitRange(workspace, tip)),
      '--',
    ],
    onPrivate(workspace),
  )
  return refusedAmong(nulSeparated(named.stdout))
}

/** What a push of a commit publishes beyond its tree, as its object holds it. */
export interface CommitRecord {
  /** The full id and the abbreviated one, as git log --oneline shows it. */
  id: string
  short: string
  /** git's subject: the message's first paragraph, on one line. */
  subject: string
  /** The rest of the message, blank lines at either end left out; '' for none. */
  body: string
  /** `Name <email>`, the date left out. */
  author: string
  committer: string
  /** Header lines other than tree, parent, author and committer (gpgsig, encoding, mergetag, any other), continuation lines included. */
  headers: string[]
}

/** `Name <email>` of an identity as git writes it (`Name <email> 1700000000 +0100`). */
const withoutDate = (ident: string) => ident.replace(/ -?\d+ [+-]\d{4}$/, '')

/** A commit object's headers and message (git's object format: headers, a blank line, the message). */
function parseCommit(text: string): {fields: Map<string, string>; headers: string[]; message: string} {
  const end = text.indexOf('\n\n')
  const head = end < 0 ? text : text.slice(0, end)
  const fields = new Map<string, string>()
  const headers: string[] = []
  let kept = false
  for (const line of head.split('\n')) {
    // A line starting with a space continues the header before it (a signature's lines).
    const key = line.startsWith(' ') ? undefined : line.split(' ', 1)[0]
    if (key !== undefined) kept = !['tree', 'parent', 'author', 'committer'].includes(key)
    if (key !== undefined && !kept && !fields.has(key)) fields.set(key, line.slice(key.length + 1))
    if (kept) headers.push(line)
  }
  return {fields, headers, message: end < 0 ? '' : text.slice(end + 2)}
}

/** The message without its subject paragraph (git's: leading blank lines, then lines up to a blank one), blank lines at either end left out. */
function bodyOf(message: string): string {
  const lines = message.split('\n')
  const blank = (line: string) => line.trim() === ''
  let at = 0
  while (at < lines.length && blank(lines[at])) at++
  while (at < lines.length && !blank(lines[at])) at++
  const rest = lines.slice(at)
  while (rest.length > 0 && blank(rest[0])) rest.shift()
  while (rest.length > 0 && blank(rest.at(-1)!)) rest.pop()
  return rest.join('\n')
}

/** The commits up to `tip`, newest first, with all that their objects hold beyond their trees and parents. */
export async function commitRecords(workspace: Workspace, tip: string): Promise<CommitRecord[]> {
  const listed = await git(['log', '-z', '--no-show-signature', '--format=%H%x00%h%x00%s', ...(await commitRange(workspace, tip)), '--'], onPrivate(workspace))
  const fields = listed.stdout.split('\0')
  const commits: Array<Pick<CommitRecord, 'id' | 'short' | 'subject'>> = []
  for (let at = 0; at + 2 < fields.length; at += 3) commits.push({id: fields[at], short: fields[at + 1], subject: fields[at + 2]})
  if (commits.length === 0) return []
  // `<id> commit <size>\n<object>\n` for each id asked.
  const objects = (await gitBytes(['cat-file', '--batch'], {...onPrivate(workspace), input: commits.map(commit => `${commit.id}\n`).join('')})).stdout
  let offset = 0
  return commits.map(commit => {
    const newline = objects.indexOf(10, offset)
    const size = Number(objects.subarray(offset, newline).toString('latin1').split(' ')[2])
    const text = objects.subarray(newline + 1, newline + 1 + size).toString('utf8')
    offset = newline + 1 + size + 1
    const {fields, headers, message} = parseCommit(text)
    return {...commit, body: bodyOf(message), author: withoutDate(fields.get('author') ?? ''), committer: withoutDate(fields.get('committer') ?? ''), headers}
  })
}

/** The user's identities (`Name <email>`) as git in the origin would write them; undefined where git has none. */
export async function identitiesOf(origin: string): Promise<{author?: string; committer?: string}> {
  const ask = async (variable: string) => {
    const asked = await git(['var', variable], {cwd: origin, okStatuses: [128]})
    return asked.exitCode === 0 ? withoutDate(asked.stdout.replace(/\n$/, '')) : undefined
  }
  const [author, committer] = await Promise.all([ask('GIT_AUTHOR_IDENT'), ask('GIT_COMMITTER_IDENT')])
  return {author, committer}
}

/** A line that starts each commit in commitPatches' output: NUL and its id (no line of a patch starts with NUL). */
export const PATCH_COMMIT = /^\0([0-9a-f]+)$/

/**
 * The commits with their patches, newest first, as bytes no configuration
 * changes (as changes.ts's patches), each commit's patches after a line
 * PATCH_COMMIT matches. A merge commit shows its change against
 * each parent it has: against the first alone (or none, git's default) it
 * could hide what it takes back of the origin's own commits (a merge with
 * `-s ours`).
 */
export async function commitPatches(workspace: Workspace, tip: string, attributes?: string): Promise<Buffer> {
  const args = [
    // An attributes file of hmm's (git/text-shown.ts): the private repository has none of its own.
    ...(attributes ? ['-c', `core.attributesFile=${attributes}`] : []),
    'log',
    '--no-show-signature',
    '--format=%x00%H',
    '-p',
    '--diff-merges=separate',
    '-M',
    '--no-color',
    ...PLAIN_PATCH,
    ...(await commitRange(workspace, tip)),
    '--',
  ]
  return (await gitBytes(args, onPrivate(workspace))).stdout
}

/** The changes commitPatches shows: each commit's from each of its parents (a first commit's from the empty tree). */
export async function commitChanges(workspace: Workspace, tip: string): Promise<Shown[]> {
  const listed = await git(['rev-list', '--parents', ...(await commitRange(workspace, tip)), '--'], onPrivate(workspace))
  const lines = listed.stdout.split('\n').filter(Boolean)
  const empty = lines.some(line => !line.includes(' ')) ? await gitLine(['mktree'], {...onPrivate(workspace), input: ''}) : ''
  return lines.flatMap(line => {
    const [commit, ...parents] = line.split(' ')
    return (parents.length > 0 ? parents : [empty]).map(from => ({from, to: commit}))
  })
}
