// What the origin was when a workspace was made, recorded so later diffs,
// applies and merges compare against it (DESIGN "Data flow of hmm run" 3).
//
// Git top-level: the HEAD commit, and the tree of the working files
// (uncommitted and untracked included, ignored excluded), written with a
// temporary copy of the origin's index into hmm's private object directory:
// the origin's index, refs, stash and objects are left byte-for-byte as they
// were. Anything else (no repository, a subdirectory of one, a bare one) is
// recorded after cloning as the tree of the fresh clone.
import {copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, utimesSync} from 'node:fs'
import {isAbsolute, join, resolve} from 'node:path'
import {HmmError} from '../ui/errors.js'
import {branchOf, configEntries, git, gitLine, gitMessages, gitReason, nulPairs} from './git.js'
import {workTreeTop} from './top.js'
import type {ObjectFormat} from './index-file.js'
import {excludingUnrecordable} from './nested.js'
import {dropExcluded} from './excluded.js'
import {trustFreshIndex} from './first-index.js'
import {createPrivateRepo, hashTreeOf, privateEnv, privateRepo, type PrivateRepo} from './private-repo.js'

export interface GitOrigin {
  /** The origin's git directory and object directory (absolute). */
  gitDir: string
  /** The repository's common directory: the git directory, but for a linked worktree. */
  commonDir: string
  objects: string
  index: string
  /** sha1 or sha256: the private repository must use the same. */
  objectFormat: string
}

/** What git says of the origin's repository, a line each. */
const REPOSITORY = [
  'rev-parse',
  '--show-toplevel',
  '--absolute-git-dir',
  '--git-common-dir',
  '--git-path',
  'objects',
  '--git-path',
  'index',
  '--show-object-format',
]
const REPOSITORY_LINES = 6

/** The origin's repository if the origin is the top of a (non-bare) git repository. */
export async function gitOriginOf(origin: string): Promise<GitOrigin | undefined> {
  return (await repositoryAndHead(origin, false))?.repo
}

/** Where HEAD is: its commit (null: no commit yet) and the branch it names (null: detached). */
interface Head {
  commit: string | null
  branch: string | null
}

/**
 * The origin's repository, and with `head` its HEAD, in one git; where HEAD
 * has no commit yet, git has said the rest before it failed on HEAD, and a
 * second git says the branch.
 */
async function repositoryAndHead(origin: string, head: boolean): Promise<{repo: GitOrigin; head?: Head} | undefined> {
  const asked = await git(head ? [...REPOSITORY, 'HEAD^{commit}', '--symbolic-full-name', 'HEAD'] : REPOSITORY, {cwd: origin, okStatuses: [128]})
  const lines = asked.stdout.split('\n')
  const answered = asked.exitCode === 0 || (head && lines.length > REPOSITORY_LINES)
  if (!answered) {
    // A repository git will not use (not safe.directory to this user: root in another user's; a broken one) is no
    // plain directory either: cloned as one, its work could never be merged, nor committed in the workspace.
    if (workTreeTop(origin) === origin) {
      throw new HmmError(`git cannot use the repository at ${origin}: ${gitMessages(asked.stderr)[0] ?? 'unknown error'} (git status there says more)`)
    }
    return undefined
  }
  const repo = repositoryFrom(origin, lines)
  if (!repo || !head) return repo && {repo}
  if (asked.exitCode === 0) return {repo, head: {commit: lines[REPOSITORY_LINES] || null, branch: branchOf(lines[REPOSITORY_LINES + 1])}}
  const branch = await git(['symbolic-ref', '--quiet', 'HEAD'], {cwd: origin, okStatuses: [1]})
  return {repo, head: {commit: null, branch: branchOf(branch.stdout.trim())}}
}

/** REPOSITORY's answers, if the origin is its repository's top. */
function repositoryFrom(origin: string, lines: string[]): GitOrigin | undefined {
  const [top, gitDir, commonDir, objects, index, objectFormat] = lines
  if (!top || resolve(top) !== origin) return undefined
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(origin, path))
  return {
    gitDir: realpathSync(gitDir),
    commonDir: realpathSync(absolute(commonDir)),
    objects: absolute(objects),
    index: absolute(index),
    objectFormat: objectFormat || 'sha1',
  }
}

export interface OriginRecord {
  headCommit: string | null
  headBranch: string | null
  forkTree: string
}

/**
 * What of the origin's config recording it needs: the user's
 * core.excludesFile, as git expands it, and the settings under which git
 * hashes the origin's files as the bytes they hold: each filter driver the
 * config defines (git-lfs's, git-crypt's) left without a program. hmm diff
 * shows the workspace's files as bytes, read by a git that knows no
 * driver; the tree it starts from must hold the same (a git-lfs file's
 * content, not the pointer git keeps), or the patch would start from bytes
 * the origin's file does not hold, and apply refuse it.
 */
async function originSettings(origin: string): Promise<{excludesFile: string | undefined; asBytes: string[]}> {
  // One git for both; a value it cannot expand as a path (a driver's "~nobody/clean") makes it fail: then one each.
  const both = await git(['config', '-z', '--path', '--get-regexp', '^(core\\.excludesfile$|filter\\.)'], {cwd: origin, okStatuses: [1, 128]})
  if (both.exitCode === 128) {
    const [excludesFile, defined] = await Promise.all([
      git(['config', '--path', '--get', 'core.excludesFile'], {cwd: origin, okStatuses: [1]}),
      git(['config', '--name-only', '--get-regexp', '^filter\\.'], {cwd: origin, okStatuses: [1]}),
    ])
    return {excludesFile: excludesFile.stdout.replace(/\n$/, '') || undefined, asBytes: unfiltered(defined.stdout.split('\n'))}
  }
  // The last core.excludesFile is the one git uses.
  const entries = configEntries(both.stdout)
  const excludesFile = entries.filter(([key]) => key === 'core.excludesfile').at(-1)?.[1]
  return {excludesFile: excludesFile || undefined, asBytes: unfiltered(entries.map(([key]) => key).filter(key => key.startsWith('filter.')))}
}

/** The options that leave each filter driver a `filter.<driver>.<key>` names without a program. */
function unfiltered(keys: string[]): string[] {
  const drivers = new Set(keys.flatMap(key => (key ? [key.slice('filter.'.length, key.lastIndexOf('.'))] : [])))
  return [...drivers].flatMap(name => ['-c', `filter.${name}.clean=`, '-c', `filter.${name}.process=`, '-c', `filter.${name}.required=false`])
}

/** Hashes again, as their bytes, the files a filter attribute names, whose entries the origin's index gave as git keeps them. */
async function hashFilteredAsBytes(origin: string, env: Record<string, string>, asBytes: string[]): Promise<void> {
  const listed = await git(['ls-files', '-z'], {cwd: origin, env})
  const checked = await git(['check-attr', '--stdin', '-z', 'filter'], {cwd: origin, env, input: listed.stdout})
  // `<path>\0filter\0<state>\0` for each path.
  const fields = checked.stdout.split('\0')
  const filtered: string[] = []
  for (let at = 0; at + 2 < fields.length; at += 3) if (!['unspecified', 'unset'].includes(fields[at + 2])) filtered.push(fields[at])
  if (filtered.length === 0) return
  const paths = filtered.map(path => `${path}\0`).join('')
  await git([...asBytes, 'add', '--renormalize', '--pathspec-from-file=-', '--pathspec-file-nul'], {
    cwd: origin,
    env: {...env, GIT_LITERAL_PATHSPECS: '1'},
    input: paths,
  })
}

/** What recording a git origin asks of it first: questions that do not depend on each other, asked at once. */
export interface OriginAnswers {
  repo: GitOrigin
  /** The user's core.excludesFile, as git expands it. */
  excludesFile: string | undefined
  headCommit: string | null
  headBranch: string | null
  /** unfiltered's settings. */
  asBytes: string[]
}

/**
 * The origin's repository and what recording it needs to know of it
 * (undefined: no git origin). Only reads the user's repository, so `hmm
 * run` asks while it builds the sandbox, before anything is made.
 */
export async function askGitOrigin(origin: string): Promise<OriginAnswers | undefined> {
  const found = await repositoryAndHead(origin, true)
  if (!found?.head) return undefined
  const settings = await originSettings(origin)
  return {repo: found.repo, excludesFile: settings.excludesFile, headCommit: found.head.commit, headBranch: found.head.branch, asBytes: settings.asBytes}
}

/**
 * Records a git origin before it is cloned; `patterns`: the config file's
 * `exclude`, whose files the clone leaves out, and so does the record.
 */
export async function recordGitOrigin(
  origin: string,
  {repo: repoOfOrigin, excludesFile, headCommit, headBranch, asBytes}: OriginAnswers,
  gitDir: string,
  patterns?: string,
): Promise<{record: OriginRecord; repo: PrivateRepo}> {
  const excludes = join(repoOfOrigin.gitDir, 'info', 'exclude')
  // Made while git adds the origin's files to its object directory, which is all the recording needs of it.
  mkdirSync(join(gitDir, 'objects'), {recursive: true})
  const made = createPrivateRepo(gitDir, {
    objects: repoOfOrigin.objects,
    objectFormat: repoOfOrigin.objectFormat,
    excludes: existsSync(excludes) ? [readFileSync(excludes, 'utf8')] : [],
    excludesFile,
  })
  // Its failure is said where it is awaited, below: one while the recording still runs is not left unhandled (which
  // would end hmm with a stack trace).
  made.catch(() => {})
  try {
    const forkTree = await recordFork(origin, repoOfOrigin, asBytes, gitDir, patterns)
    return {record: {headCommit, headBranch, forkTree}, repo: await made}
  } finally {
    // Ended, also when the recording failed: what removes the workspace must not race it.
    await made.catch(() => undefined)
  }
}

/** Writes the tree of the origin's files (its fork tree) with a copy of its index, into the private object directory. */
async function recordFork(origin: string, repoOfOrigin: GitOrigin, asBytes: string[], gitDir: string, patterns?: string): Promise<string> {
  const forkIndex = join(gitDir, 'index.fork')
  // Starting from the origin's own index: its stat data matches the origin's
  // files, so git re-reads only what changed since the user's last `git add`.
  if (existsSync(repoOfOrigin.index)) {
    copyFileSync(repoOfOrigin.index, forkIndex)
    // With the index's own time: git takes an entry not older than its index for racily clean and reads the file,
    // so a file the user changed in the second of their git add is recorded as it is, not as git add saw it.
    const {atime, mtime} = statSync(repoOfOrigin.index)
    utimesSync(forkIndex, atime, mtime)
  }
  const env = {GIT_INDEX_FILE: forkIndex, GIT_OBJECT_DIRECTORY: join(gitDir, 'objects'), GIT_ALTERNATE_OBJECT_DIRECTORIES: repoOfOrigin.objects}
  const added = await git([...asBytes, 'add', '--all', '--', '.'], {cwd: origin, env, okStatuses: [128]})
  if (added.exitCode !== 0) {
    const excluded = await excludingUnrecordable({cwd: origin, env}, repoOfOrigin.objectFormat as ObjectFormat)
    if (excluded.length === 0) throw new HmmError(`git add failed: ${gitReason(added.stderr)}`)
    await git([...asBytes, 'add', '--all', '--', '.', ...excluded], {cwd: origin, env})
  }
  if (asBytes.length > 0) await hashFilteredAsBytes(origin, env, asBytes)
  if (patterns) await dropExcluded({cwd: origin, env}, patterns, {file: forkIndex, format: repoOfOrigin.objectFormat as ObjectFormat})
  return gitLine(['write-tree'], {cwd: origin, env})
}

/**
 * Records a non-git origin from its fresh clone (nobody has touched it
 * yet; made at `treeMade`): the tree by hashes only, and the files themselves as a second
 * copy-on-write clone, `base`, out of the command's reach, from which the
 * contents a diff needs are taken later (ensureBaseBlobs).
 */
export async function recordPlainOrigin(
  repoMade: Promise<PrivateRepo>,
  tree: string,
  base: string,
  treeMade: number,
  clone: (from: string, to: string) => Promise<unknown>,
): Promise<OriginRecord> {
  const hashed = async () => {
    const repo = await repoMade
    const forkTree = await hashTreeOf(repo, tree)
    // The command starts only after this: the index's entries of this second are not taken at their word.
    await trustFreshIndex(repo.index, treeMade)
    return forkTree
  }
  // At once: both only read the fresh clone, which nothing else touches before the command starts.
  const [forkTree] = await Promise.all([hashed(), clone(tree, base)])
  return {headCommit: null, headBranch: null, forkTree}
}

/**
 * Writes into the private repository the recorded contents of the files
 * that differ between the fork tree and a later tree, taken from the base
 * clone, so a patch between the two trees can be made. Only for origins
 * recorded by hashes (plain ones); a no-op when the objects are there.
 */
export async function ensureBaseBlobs(gitDir: string, base: string, forkTree: string, laterTree: string): Promise<void> {
  const env = privateEnv(privateRepo(gitDir))
  const changed = await git(['diff-tree', '-r', '-z', '--no-renames', '--raw', forkTree, laterTree], {cwd: gitDir, env})
  const missing: Array<{path: string; id: string}> = []
  // ":<old mode> <new mode> <old id> <new id> <status>" then the path.
  for (const [record, path] of nulPairs(changed.stdout)) {
    const [oldMode, , oldId] = record.slice(1).split(' ')
    if (/^0+$/.test(oldId) || oldMode === '160000') continue
    const known = await git(['cat-file', '-e', oldId], {cwd: gitDir, env, okStatuses: [1, 128]})
    if (known.exitCode !== 0) missing.push({path, id: oldId})
  }
  // Hashed as when recorded: regular files through the work tree's attributes, links by their target.
  const baseEnv = {...env, GIT_WORK_TREE: base}
  for (const {path, id} of missing) {
    const file = join(base, path)
    const isLink = lstatSync(file, {throwIfNoEntry: false})?.isSymbolicLink()
    const written = isLink
      ? await gitLine(['hash-object', '-w', '--stdin', '--no-filters'], {cwd: base, env: baseEnv, input: readlinkSync(file, {encoding: 'buffer'})})
      : await gitLine(['hash-object', '-w', '--', path], {cwd: base, env: baseEnv})
    if (written !== id) throw new HmmError(`the recorded copy of ${path} in ${base} no longer matches what was recorded`)
  }
}
