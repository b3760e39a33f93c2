// Taking a workspace's commits out of it, safely (DESIGN "Git, safely"):
//
//  1. `git bundle create` runs INSIDE a sandbox, through the helper: the
//     workspace's repository is the command's (its config and hooks can run
//     anything), so git may run on it only where the command itself could.
//     That sandbox may read what `hmm run`'s may, and write nothing but an
//     empty directory made for the bundle (and devices, for /dev/null).
//  2. Outside, the bundle must be a regular file (lstat, then opened with
//     O_NOFOLLOW and checked again on the descriptor); it is copied into
//     hmm's private repository, where nothing sandboxed can reach it.
//  3. The copy is fetched into the private repository (whose objects see
//     the origin's through alternates), then from there into the origin's
//     repository as refs/hmm/<id> with fetch.fsckObjects/transfer.fsckObjects
//     on. The second hop is what checks every object: git does not fsck
//     objects fetched from a bundle directly (checked with git 2.39), but
//     does for a fetch from a repository.
//
// Nothing here runs git outside the sandbox with the workspace's `.git` as
// its repository; its HEAD is read as plain files (workspace-head.ts).
import {closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {removeTree} from '../native/helper.js'
import {programPath} from '../platform/programs.js'
import {readerOf, runConfined, type Reader} from '../platform/confined.js'
import {canonical} from '../sandbox/paths.js'
import {HmmError} from '../ui/errors.js'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, ALLOW_LOCAL_TRANSPORT, confinedEnv, git, gitLine, gitReason} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {branchTip} from './branch-tip.js'
import {ensureBaseBlobs} from './origin.js'
import {privateEnv, privateRepo, privateRepoSources} from './private-repo.js'
import {gitDirsOf, readable} from './top.js'
import {readRegularFile, readWorkspaceHead} from './workspace-head.js'

/** The name the bundle is made under, in the directory the sandbox may write. */
export const BUNDLE_NAME = 'out.bundle'
/** The private ref the bundle is fetched into before it goes to the origin. */
export const INCOMING_REF = 'refs/hmm/incoming'
/** More than any message git prints; the rest is dropped. */
const OUTPUT_MAX = 1 << 20

export function hmmRef(workspace: Workspace): string {
  return `refs/hmm/${workspace.id}`
}

export function bundleDir(workspace: Workspace): string {
  return join(workspace.root, 'bundle')
}

/** Who bundles: a program that reads as the workspace's command may (the tree included) and writes only the bundle directory. */
export function bundleReader(workspace: Workspace, data: string): Reader {
  return readerOf(workspace, data, bundleDir(workspace), privateRepoSources(workspace.gitDir))
}

export interface WorkspaceCommits {
  /** The workspace's HEAD commit, read from its files. */
  head: string
}

/**
 * The workspace's HEAD if it has commits made since it was made, else
 * undefined. Checks its repository is a directory of the tree (not a `.git`
 * file or link pointing elsewhere).
 */
export function workspaceCommits(workspace: Workspace): WorkspaceCommits | undefined {
  const dotGit = join(workspace.tree, '.git')
  const stat = lstatSync(dotGit, {throwIfNoEntry: false})
  if (!stat) throw new HmmError(`workspace ${workspace.label} has no repository any more (${dotGit} is gone)`)
  if (!stat.isDirectory()) {
    throw new HmmError(`workspace ${workspace.label} has no repository of its own (${dotGit} is not a directory); hmm takes commits only from it`)
  }
  const head = readWorkspaceHead(workspace.tree)
  if (head === undefined) throw new HmmError(`cannot read the HEAD of workspace ${workspace.label}'s repository`)
  return head === null || head === workspace.row.headCommit ? undefined : {head}
}

/** Whether a repository's config `text` makes it a partial clone (git's own parser, on the text: no repository read). */
async function partialClone(text: string | undefined): Promise<boolean> {
  if (text === undefined) return false
  const found = await git(['config', '--file', '-', '--get', 'extensions.partialclone'], {cwd: '/', input: text, okStatuses: [1]})
  return found.exitCode === 0
}

/**
 * Refuses a workspace's repository its command made a partial clone: git
 * would fetch the objects it lacks from where its config says, running
 * what that names (core.sshCommand, a remote helper). The confined git is
 * allowed no transport anyway (git.ts NO_TRANSPORT); this says why plainly.
 * A workspace of an origin that is a partial clone (a blobless clone of a
 * large repository) is one from the start: it bundles as before.
 */
async function refuseMadePartial(workspace: Workspace): Promise<void> {
  if (!(await partialClone(readRegularFile(join(workspace.tree, '.git', 'config'))))) return
  const origin = gitDirsOf(workspace.row.origin).at(-1)
  if (origin !== undefined && (await partialClone(readable(join(origin, 'config'))))) return
  throw new HmmError(
    `workspace ${workspace.label}'s repository was made a partial clone (extensions.partialClone in its .git/config), whose missing objects git would fetch; hmm takes commits only from a full one`,
  )
}

/** Makes the bundle inside the sandbox; returns its path (not yet trusted), or undefined when it holds no commit. */
async function makeBundle(workspace: Workspace, data: string): Promise<string | undefined> {
  await refuseMadePartial(workspace)
  const dir = bundleDir(workspace)
  // A process the last bundling left behind may still be changing it.
  removeTree(dir)
  mkdirSync(dir, {mode: 0o700})
  const bundle = join(canonical(dir), BUNDLE_NAME)
  const range = workspace.row.headCommit ? ['HEAD', `^${workspace.row.headCommit}`] : ['HEAD']
  const result = await runConfined({
    reader: bundleReader(workspace, data),
    cwd: canonical(workspace.tree),
    command: [programPath('git') ?? 'git', 'bundle', 'create', '--quiet', bundle, ...range],
    // The repository in the tree, never one found by searching upwards from it.
    env: confinedEnv({GIT_DIR: join(workspace.tree, '.git')}),
    // It reads what its pack-objects writes.
    readsPipes: true,
    maxOutput: OUTPUT_MAX,
  })
  const outcome = result.outcome
  if (result.stuckOnFifo) {
    throw new HmmError(`could not take the commits out of workspace ${workspace.label}: git was left waiting on a FIFO in its repository`)
  }
  if (outcome.kind === 'setup-failed') throw new HmmError(`the sandbox could not be set up: ${outcome.reason}`)
  if (outcome.kind === 'not-started') throw new HmmError(`git could not be started in the sandbox: ${outcome.reason}`)
  if (outcome.kind === 'signalled') throw new HmmError(`git bundle create was killed by ${outcome.signal}`)
  if (outcome.status !== 0) {
    if (result.stderr.includes('empty bundle')) return undefined
    throw new HmmError(`could not take the commits out of workspace ${workspace.label}: ${gitReason(result.stderr)}`)
  }
  return bundle
}

/** Larger than any bundle git would make of a workspace's commits is not expected; read in chunks anyway. */
const CHUNK = 1 << 20

/**
 * Copies the bundle the sandbox made to `to`, refusing anything but a
 * regular file: a link must not make hmm read (and fetch) another file.
 */
export function copyRegularFile(from: string, to: string): void {
  const stat = lstatSync(from, {throwIfNoEntry: false})
  if (!stat) throw new HmmError(`the bundle ${from} was not made`)
  if (!stat.isFile()) throw new HmmError(`the bundle ${from} is not a regular file; it is not used`)
  let input: number
  try {
    input = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    throw new HmmError(`the bundle ${from} cannot be opened as a regular file: ${(error as Error).message}`)
  }
  try {
    if (!fstatSync(input).isFile()) throw new HmmError(`the bundle ${from} is not a regular file; it is not used`)
    rmSync(to, {force: true})
    const output = openSync(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    try {
      const buffer = Buffer.alloc(CHUNK)
      for (;;) {
        const read = readSync(input, buffer, 0, CHUNK, null)
        if (read === 0) break
        let written = 0
        while (written < read) written += writeSync(output, buffer, written, read - written)
      }
    } finally {
      closeSync(output)
    }
  } finally {
    closeSync(input)
  }
}

export interface TakenCommits {
  /** The commit now at refs/hmm/<id> in the origin. */
  tip: string
  tipTree: string
  /** The workspace's files now (the tree written by treeNow). */
  nowTree: string
  /** Whether the workspace holds changes it did not commit (beyond what the origin had uncommitted when it was made). */
  uncommitted: boolean
}

/** Raw diff records between two trees: one string per changed path (a rename is two: a deletion and an addition). */
export async function rawChanges(workspace: Workspace, from: string, to: string): Promise<Set<string>> {
  return new Set((await rawChangesBetween(workspace, from, to)).map(([record, path]) => `${record}\0${path}`))
}

/**
 * How many files the records (some of rawChanges(from, to)) change, as
 * `git diff --stat -M` counts them (WORK, SPEC `hmm ls`): a file renamed,
 * changed a little or not, is one, when both its deletion and its addition
 * are among them. So the count is 0 exactly when the records are none.
 */
export async function filesChanged(workspace: Workspace, from: string, to: string, records: string[]): Promise<number> {
  const statuses = new Set(records.map(record => record[record.indexOf('\0') - 1]))
  if (!statuses.has('D') || !statuses.has('A')) return records.length
  // Telling a changed rename reads what the deleted files held: a plain origin's come from its base clone.
  if (workspace.row.originKind === 'plain') await ensureBaseBlobs(workspace.gitDir, workspace.base, from, to)
  const paths = new Set(records.map(record => record.slice(record.indexOf('\0') + 1)))
  const env = privateEnv(privateRepo(workspace.gitDir))
  const raw = await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '-M', '--diff-filter=R', '--raw', from, to], {cwd: workspace.gitDir, env})
  // Each rename: its record, then the path it had and the path it has.
  const fields = raw.stdout.split('\0')
  let renamed = 0
  for (let index = 0; index + 2 < fields.length; index += 3) if (paths.has(fields[index + 1]) && paths.has(fields[index + 2])) renamed++
  return records.length - renamed
}

/**
 * The raw changes (rawChanges) from the HEAD commit's tree to the tree of
 * the files, less those the origin already had uncommitted when the
 * workspace was made (the clone holds them too, and they are the user's,
 * not the command's).
 */
export async function ownUncommittedChanges(workspace: Workspace, tipTree: string, nowTree: string): Promise<string[]> {
  if (tipTree === nowTree) return []
  const env = privateEnv(privateRepo(workspace.gitDir))
  const headTree = workspace.row.headCommit
    ? await gitLine(['rev-parse', '--verify', `${workspace.row.headCommit}^{tree}`], {cwd: workspace.gitDir, env})
    : await gitLine(['mktree'], {cwd: workspace.gitDir, env, input: ''})
  const inherited = await rawChanges(workspace, headTree, workspace.row.forkTree!)
  return [...(await rawChanges(workspace, tipTree, nowTree))].filter(change => !inherited.has(change))
}

/** How many files in the tree are changed from the HEAD commit, less those the origin had uncommitted (ownUncommittedChanges). */
export async function ownUncommitted(workspace: Workspace, tipTree: string, nowTree: string): Promise<number> {
  return filesChanged(workspace, tipTree, nowTree, await ownUncommittedChanges(workspace, tipTree, nowTree))
}

/**
 * The range of the workspace's commits, given their tip: what was neither
 * in the origin when it was made, nor is in the branch the origin is on
 * now (merged, by hmm or by hand), nor was pushed by hmm pr; `taken`: more
 * commits to count as taken back (a merge the user is still resolving).
 * WORK counts, log lists and merge and pr name only those (SPEC `hmm
 * apply` › State: a commit merged earlier is not listed again).
 */
export async function commitRange(workspace: Workspace, tip: string, taken: string[] = []): Promise<string[]> {
  const branch = workspace.row.originKind === 'git' ? await branchTip(workspace.row.origin) : undefined
  const excluded = [workspace.row.headCommit, branch, workspace.row.pushedCommit, ...taken].filter(commit => commit !== null && commit !== undefined)
  return [tip, ...excluded.map(commit => `^${commit}`)]
}

/**
 * The workspace's commits since it was made, into hmm's private repository
 * as refs/hmm/incoming (their objects are checked on the way into the
 * origin, takeIntoOrigin). Returns their tip, the workspace's HEAD, or
 * undefined when there are none (HEAD moved back to what the origin had).
 */
export async function takeIntoPrivate(workspace: Workspace, data: string, commits: WorkspaceCommits): Promise<string | undefined> {
  const {head} = commits
  // Taken at this HEAD already (by the count when the command exited, say): a commit's ID names all
  // it holds, so a bundle made again would bring the same objects, for a sandbox and a dozen processes.
  if (readRegularFile(join(workspace.gitDir, INCOMING_REF))?.trim() === head) return head
  const made = await makeBundle(workspace, data)
  if (!made) return undefined
  const incoming = join(workspace.gitDir, 'incoming.bundle')
  copyRegularFile(made, incoming)
  removeTree(bundleDir(workspace))

  const env = privateEnv(privateRepo(workspace.gitDir))
  const intoPrivate = await git(
    [
      ...ALLOW_LOCAL_TRANSPORT,
      '-c',
      'maintenance.auto=false',
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      incoming,
      `+HEAD:${INCOMING_REF}`,
    ],
    {cwd: workspace.gitDir, env, okStatuses: [1, 128]},
  )
  rmSync(incoming, {force: true})
  if (intoPrivate.exitCode !== 0) {
    throw new HmmError(`could not read the commits of workspace ${workspace.label}: ${gitReason(intoPrivate.stderr)}`)
  }
  const fetched = await gitLine(['rev-parse', '--verify', `${INCOMING_REF}^{commit}`], {cwd: workspace.gitDir, env})
  if (fetched !== head) throw new HmmError(`the commits taken out of workspace ${workspace.label} do not end at its HEAD ${head}`)
  return head
}

/**
 * Why a fetch with fsckObjects failed: the object fsck refused and why
 * (`error: object <id>: <check>: <what>`, before git's last words, which
 * only say "index-pack failed"), else what git said last.
 */
function fetchReason(stderr: string): string {
  const refused = /^error: object [0-9a-f]+: (.+)$/m.exec(stderr)
  return refused ? `git's fsck refuses an object they hold: ${refused[1]}` : gitReason(stderr)
}

/**
 * The commits takeIntoPrivate fetched, into the origin's repository as
 * refs/hmm/<id>, every object checked. The origin's branch, index and files
 * are not touched. `nowTree`: the workspace's files (treeNow).
 */
export async function takeIntoOrigin(workspace: Workspace, origin: string, head: string, nowTree: string): Promise<TakenCommits> {
  const env = privateEnv(privateRepo(workspace.gitDir))
  // The second hop, with every object checked, into the user's repository.
  const intoOrigin = await git(
    // Options and their values in pairs.
    // prettier-ignore
    [
      ...ALLOW_LOCAL_TRANSPORT,
      '-c', 'fetch.fsckObjects=true',
      '-c', 'transfer.fsckObjects=true',
      'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-prune', '--no-auto-gc',
      workspace.gitDir,
      `+${INCOMING_REF}:${hmmRef(workspace)}`,
    ],
    {cwd: origin, okStatuses: [1, 128]},
  )
  if (intoOrigin.exitCode !== 0) {
    throw new HmmError(`could not fetch the commits of workspace ${workspace.label} into ${origin}: ${fetchReason(intoOrigin.stderr)}`)
  }
  const tip = await gitLine(['rev-parse', '--verify', `${hmmRef(workspace)}^{commit}`], {cwd: origin})
  if (tip !== head) throw new HmmError(`${hmmRef(workspace)} in ${origin} is not workspace ${workspace.label}'s HEAD ${head}`)
  const tipTree = await gitLine(['rev-parse', '--verify', `${tip}^{tree}`], {cwd: workspace.gitDir, env})
  return {tip, tipTree, nowTree, uncommitted: (await ownUncommitted(workspace, tipTree, nowTree)) > 0}
}
