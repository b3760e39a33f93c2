// What a workspace changed: the tree of its files now, and the patch from
// the tree recorded when it was made (the fork tree) to that.
//
// Security: the workspace's `.git` is never the repository here. The tree
// is hashed into hmm's private repository (its own index, system and global
// config off), so no filter, diff driver, fsmonitor or hook of anyone's
// runs; the only setting taken from outside is the user's own
// core.excludesFile, read from the origin's (trusted) config when the
// workspace was made (private-repo.ts). Patches are made with --no-ext-diff
// --no-textconv --no-color --binary --full-index so no configuration changes
// their bytes: what `hmm diff` shows is exactly what `hmm apply` applies.
import {lstatSync, rmSync, type BigIntStats} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {debug, HmmError, stopwatch} from '../ui/errors.js'
import {helperPath} from '../native/helper.js'
import {readerOf} from '../platform/confined.js'
import {loadConfig} from '../sandbox/config.js'
import {listPaths} from '../ui/format.js'
import type {Workspace} from '../workspaces/workspace.js'
import {git, gitBytes, gitLine, gitReason, gitScript, PLAIN_PATCH, prepareGitScript, type GitOptions, type GitResult} from './git.js'
import {checkFirstIndex, distrustAfterAdd} from './first-index.js'
import {dateIndexAfter, INDEX_LOCK_TRIES, INDEX_LOCK_WAIT_MS, objectFormatOf} from './index-trust.js'
import {excludingUnrecordable, restoreGitlinks, takeOutGitlinks, type Gitlink} from './nested.js'
import {ensureBaseBlobs} from './origin.js'
import {keptAsRecorded} from './excluded.js'
import {oncePerWorkspace} from './per-workspace.js'
import {privateEnv, privateRepo, privateRepoSources} from './private-repo.js'
import {REFUSED, refusedAmong} from './refused-paths.js'

/*
 * Stat checks are git's defaults (mtime, ctime, inode, size), never
 * core.checkStat=minimal: with it a file the
 * command rewrites at the same size, then resets its mtime, is never seen as
 * changed — not shown, not applied, counted by rm as no work. ctime and
 * inode cannot be forged that way (within one second, index-trust.ts sees
 * to it). The first diff is still cheap: the workspace index starts with the
 * clone's own stat data for every file the origin provably did not change
 * (first-index.ts), so git reads only what the command touched.
 */

/** The private index brought up to date: the environment for git on it, and its gitlinks (undefined: not read). */
interface Indexed {
  env: Record<string, string>
  gitlinks?: Gitlink[]
  /** The second to date the index after when git rewrites it again, its stat data unchanged (distrustAfterAdd). */
  datedAfter?: number
  /** The tree of the index as it was brought up to date, where the git that did it wrote it (CHECKED_ADD). */
  tree?: string
}

/** The private repository's index and git's environment on it and the tree. */
function indexEnv(workspace: Workspace): {index: string; env: Record<string, string>} {
  const repo = privateRepo(workspace.gitDir)
  // In C: hmm reads what git says of the files it could not read (refuseUnreadable).
  return {index: repo.index, env: {...privateEnv(repo), GIT_WORK_TREE: workspace.tree, LC_ALL: 'C'}}
}

const readings = new Map<string, Reading>()

/**
 * Git reading the tree does so as the workspace's command may, writing only
 * the private repository. Worked out once per workspace per command (its
 * policy is a few milliseconds of work): the checked add and the gits after
 * it read under the same.
 */
function readingOf(workspace: Workspace): Reading {
  let reading = readings.get(workspace.root)
  if (!reading) {
    reading = {label: workspace.label, reader: readerOf(workspace, workspace.data, workspace.gitDir, privateRepoSources(workspace.gitDir))}
    readings.set(workspace.root, reading)
  }
  return reading
}

/** Works out, while the workspace's command runs, how its files will be read once it ends (readingOf). */
export function planReading(workspace: Workspace): void {
  try {
    readingOf(workspace)
  } catch {
    // Said where the files are read.
  }
}

/**
 * Brings the private index up to date with the workspace's files (committed
 * or not, ignored files left out): git re-reads only files whose stat data
 * changed. Callers check first that the tree is a directory (app/taking.ts).
 */
async function indexFilesNow(workspace: Workspace): Promise<Indexed> {
  const {index, env} = indexEnv(workspace)
  const timing = stopwatch()
  await checkFirstIndex(index, workspace.tree)
  timing.lap('checked the entries cloned last')
  const on = {index, cwd: workspace.tree, env}
  const reading = readingOf(workspace)
  // Its sandbox is set up while the gitlinks are taken out (kept if the end of a command set it up already).
  readFilesSoon(workspace)
  const gitlinks = await takeOutGitlinks(on)
  // The gitlinks git recorded, read from the index as parsed to distrust its recent entries (not parsed again for them).
  let recorded: Gitlink[] | undefined
  let datedAfter: number | undefined
  let tree: string | undefined
  // Twice at most: an index hmm cannot rewrite (version 4, from the origin) is removed, and git makes a new one.
  for (let pass = 1; ; pass++) {
    const looked = Date.now()
    // Large files are looked for once, before git first reads any.
    tree = await addAll(workspace, env, reading, pass === 1)
    timing.lap('git add')
    const distrusted = await distrustAfterAdd(index, looked, parsed => (recorded = parsed.gitlinks()))
    datedAfter = distrusted.datedAfter
    if (distrusted.index === 'kept') break
    if (pass === 2) throw new HmmError(`could not read the files of workspace ${workspace.label}: git keeps an index hmm cannot read`)
  }
  timing.lap('distrusted the entries of this second')
  const restored = await restoreGitlinks(on, workspace.tree, gitlinks)
  if (restored.length > 0 && datedAfter !== undefined) await dateIndexAfter(index, datedAfter)
  // Distrusting entries changed their stat data only; gitlinks put back change the tree.
  return {env, gitlinks: recorded && [...recorded, ...restored], datedAfter, tree: restored.length > 0 ? undefined : tree}
}

/** What indexFilesNow gave each workspace in this hmm command. */
const indexed = oncePerWorkspace(indexFilesNow)

/**
 * The gitlinks of the private index brought up to date with the files (the
 * nested repositories there now; indexFilesNow, once per command);
 * undefined where it was not read as it was written.
 */
export async function gitlinksNow(workspace: Workspace): Promise<Gitlink[] | undefined> {
  return (await indexed(workspace)).gitlinks
}

/** Files larger than this are not read (unless the config's max_file_size says otherwise): an 8 GB sparse file costs no disk, but minutes of hashing on every diff. */
export const MAX_FILE_SIZE = 2 ** 30

/**
 * Files larger than this together are not read in one look (unless the
 * config's max_read_size says otherwise): many sparse files, each within
 * max_file_size, cost as much (attacker's review 8, F10). Only what changed
 * is read (first-index.ts), so a big repository's unchanged files do not count.
 */
export const MAX_READ_SIZE = 4 * 2 ** 30

/** How much hmm reads of a workspace's files: each, and all of them in one look. */
function sizeLimits(): {file: number; total: number} {
  const config = loadConfig()
  return {file: config.maxFileSize ?? MAX_FILE_SIZE, total: config.maxReadSize ?? MAX_READ_SIZE}
}

/** A size as max_file_size is written: in the largest binary unit it is a whole number of, else in bytes. */
function sizeText(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', 2 ** 40],
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes % size === 0) return `${bytes / size} ${unit}`
  }
  return `${bytes} bytes`
}

type Reading = NonNullable<GitOptions['readsWorkspace']>

/** A deleted entry git lists may lie beneath what is a file now (ENOTDIR), or be gone: nothing to read there. */
function lstatOrNothing(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, {bigint: true})
  } catch {
    return undefined
  }
}

/**
 * The files git add would read, NUL-terminated, by two gits that read no
 * contents (but of an entry racily clean): those whose stat data is not the
 * index's, touched but unchanged ones too (diff-files; a gitlink by its
 * HEAD alone: no git run in a nested repository, and .gitmodules has no
 * say), then the new ones (ls-files; a nested repository as `dir/`). git
 * add would read the touched ones to see they did not change; listed,
 * their sizes are looked at before any is read, and update-index takes
 * their stat data as add does, so that no later look reads them again.
 */
const CHANGED = ['diff-files', '-z', '--name-only', '--ignore-submodules=dirty']
const NEW = ['ls-files', '-z', '--others', '--exclude-standard']
const TO_ADD = [CHANGED, NEW]

/**
 * Refuses, before git reads any, files larger than max_file_size among
 * those git add would read, or larger than max_read_size together: the
 * ones whose stat data changed since the index and the new ones (TO_ADD's
 * gits). Their size is looked at, never their contents.
 */
async function refuseLargeFiles(workspace: Workspace, env: Record<string, string>, reading: Reading): Promise<void> {
  const listed = await Promise.all(TO_ADD.map(args => git(args, {cwd: workspace.tree, env, readsWorkspace: reading})))
  const files = [...new Set(listed.flatMap(({stdout}) => stdout.split('\0').filter(Boolean)))].flatMap(path => {
    const stat = lstatOrNothing(join(workspace.tree, path))
    return stat?.isFile() ? [{path, size: stat.size}] : []
  })
  const limit = sizeLimits()
  const large = files.filter(({size}) => size > BigInt(limit.file)).map(({path}) => path)
  if (large.length > 0) {
    const which = large.length === 1 ? 'a file' : 'files'
    throw new HmmError(
      `workspace ${workspace.label} has ${which} larger than max_file_size (${sizeText(limit.file)}), which hmm does not read: ${listPaths(large.sort())}`,
    )
  }
  if (files.reduce((sum, {size}) => sum + size, 0n) <= BigInt(limit.total)) return
  // The largest first: what to remove to come within the bound.
  const largest = files.sort((a, b) => (a.size === b.size ? (a.path < b.path ? -1 : 1) : a.size > b.size ? -1 : 1)).map(({path}) => path)
  throw new HmmError(
    `workspace ${workspace.label} has ${files.length} files larger than max_read_size (${sizeText(limit.total)}) together, which hmm does not read: ${listPaths(largest)}`,
  )
}

/** The exit status of CHECKED_ADD when the helper found a file too large, or git ls-files or the helper failed. */
const NOT_CHECKED = 90

/**
 * refuseLargeFiles and git add in one sandbox (one start of the helper,
 * not two): two gits list the files git add would read (TO_ADD) into files
 * of the private repository's, at once (each only reads the index and the
 * tree's metadata, so neither waits for the other), the helper looks at
 * their sizes, then git
 * update-index reads those files, and only those: what `git add --all`
 * does, without looking for untracked files a second time (the helper
 * writes a nested repository's `dir/` as update-index takes it; --replace
 * lets a file take the place of a directory, and the other way, as add
 * does). Then git writes the index's tree (treeNow), on stdout. When the
 * helper finds one too large (or any fails), nothing is added:
 * refuseLargeFiles looks again, and names them.
 */
const CHECKED_ADD = [
  'git=$1 changed=$2 new=$3 helper=$4 limit=$5 total=$6 checked=$7',
  `"$git" ${NEW.join(' ')} >"$new" & "$git" ${CHANGED.join(' ')} >"$changed"`,
  `listed=$?; wait $! && [ $listed = 0 ] || exit ${NOT_CHECKED}`,
  // Nothing changed and nothing new (a command that wrote nothing, a diff again): only the tree is asked for.
  `if [ -s "$changed" ] || [ -s "$new" ]; then "$helper" larger-than "$limit" "$total" "$changed" "$new" >"$checked" || exit ${NOT_CHECKED}`,
  '"$git" update-index --add --remove --replace -z --stdin <"$checked" || exit; fi',
  '"$git" write-tree --missing-ok',
  // One line: HMM_DEBUG shows the command on one.
].join('; ')

/**
 * What git update-index says of a path it leaves out, one git add refuses
 * (`.git` in it: refused-paths.ts), exiting 0 all the same; not translated.
 */
const IGNORED_PATH = /^Ignoring path /m

/** Where CHECKED_ADD lists the files git add would read (changed, new), and where the helper writes those it may read. */
const listedPaths = (workspace: Workspace) => ['changed', 'new', 'checked'].map(name => join(workspace.gitDir, `${name}.${process.pid}`))

/** CHECKED_ADD's arguments. */
function checkedAddArgs(workspace: Workspace): string[] {
  const limit = sizeLimits()
  const [changed, added, checked] = listedPaths(workspace)
  return [changed, added, helperPath(), String(limit.file), String(limit.total), checked]
}

/** addAll's options for git. */
function addOptions(workspace: Workspace, env: Record<string, string>, reading: Reading) {
  return {cwd: workspace.tree, env, okStatuses: [128], readsWorkspace: reading}
}

/** git add after refusing large files, in one sandbox (CHECKED_ADD); else refuseLargeFiles, then git add. */
async function checkedAdd(workspace: Workspace, options: GitOptions & {env: Record<string, string>; readsWorkspace: Reading}): Promise<GitResult> {
  try {
    const added = await gitScript('add', CHECKED_ADD, checkedAddArgs(workspace), {...options, okStatuses: [...(options.okStatuses ?? []), NOT_CHECKED]})
    // A path git refuses: failed, as git add fails (addAll names them).
    if (added.exitCode === 0 && IGNORED_PATH.test(added.stderr)) return {...added, exitCode: 128}
    // update-index stops where add goes on (a tracked directory replaced by a link: its files lie "beyond a symbolic
    // link"), before it wrote the index; the sizes passed, so git add, reading the same files, takes over.
    if (added.exitCode !== 0 && added.exitCode !== NOT_CHECKED && !added.stderr.includes('index.lock')) {
      return git(['add', '--all', '--', '.'], options)
    }
    if (added.exitCode !== NOT_CHECKED) return added
  } finally {
    for (const path of listedPaths(workspace)) rmSync(path, {force: true})
  }
  await refuseLargeFiles(workspace, options.env, options.readsWorkspace)
  return git(['add', '--all', '--', '.'], options)
}

/**
 * What git says of a path it could not read, each followed by why (the
 * sandbox's git speaks C: indexEnv): a directory it could not list (which
 * ls-files and add leave out, with only a warning), a tracked file it could
 * not look at (which diff-files takes as unchanged), a file it could not
 * open (which fails the add). A path may hold newlines: each message is
 * looked for from the start of a line to the reason at the end of one.
 */
const UNREADABLE = [
  /^warning: could not open directory '([^]+?)': ([^\n]+)$/gm,
  /^error: open\("([^]+?)"\): ([^\n]+)$/gm,
  /^(?!(?:error|fatal|warning|hint): )([^]+?): (Permission denied)$/gm,
]

/** What marks each of them, wherever in git's messages: found, the workspace is refused though no path could be told. */
const UNREADABLE_MARK = /could not open directory|^error: open\(|: Permission denied$/m

/**
 * Refuses a workspace some of whose files git could not read (a mode the
 * command set): a diff without them would show less than the workspace
 * holds, and apply or merge take less, with nothing said.
 */
function refuseUnreadable(workspace: Workspace, said: string): void {
  if (!UNREADABLE_MARK.test(said)) return
  const found = UNREADABLE.flatMap(pattern => [...said.matchAll(pattern)])
  const paths = [...new Set(found.map(([, path]) => path))]
  const reasons = [...new Set(found.map(([, , reason]) => reason))].join(', ') || 'Permission denied'
  const what = paths.length > 0 ? listPaths(paths) : 'some of its files'
  throw new HmmError(
    `could not read the files of workspace ${workspace.label}: git cannot read ${what} (${reasons}); hmm exec ${workspace.id} chmod -R u+rwX . gives them back`,
  )
}

/**
 * `git add --all` into the private index, waiting for another hmm that
 * holds it; `checked`: large files refused first. The tree of the index,
 * where the git that added wrote it (CHECKED_ADD).
 */
async function addAll(workspace: Workspace, env: Record<string, string>, reading: Reading, checked: boolean): Promise<string | undefined> {
  const options = addOptions(workspace, env, reading)
  let excluded: string[] = []
  for (let attempt = 1; ; attempt++) {
    const script = checked && attempt === 1
    const added = script ? await checkedAdd(workspace, options) : await git(['add', '--all', '--', '.', ...excluded], options)
    refuseUnreadable(workspace, added.stderr)
    if (added.exitCode === 0) return /^[0-9a-f]{40,64}$/.exec(added.stdout.trim())?.[0]
    // Once: a nested repository git cannot record (another object format, no commit) is left out.
    if (!added.stderr.includes('index.lock') && excluded.length === 0) {
      excluded = await excludingUnrecordable({...options, okStatuses: []}, objectFormatOf(env.GIT_INDEX_FILE))
      if (excluded.length > 0) continue
    }
    if (!added.stderr.includes('index.lock') || attempt >= INDEX_LOCK_TRIES) {
      // git names only the first path it refuses, and in the user's language: hmm names them all.
      const others = await git(['ls-files', '-z', '--others', '--exclude-standard'], {...options, okStatuses: []})
      const refused = refusedAmong(others.stdout.split('\0').filter(Boolean))
      if (refused.length > 0) {
        throw new HmmError(`workspace ${workspace.label} holds files whose ${REFUSED}, so hmm cannot read its files: ${listPaths(refused)}`)
      }
      throw new HmmError(`could not read the files of workspace ${workspace.label}: ${gitReason(added.stderr)}`)
    }
    await sleep(INDEX_LOCK_WAIT_MS)
  }
}

/**
 * Starts, ahead, the sandbox of the first git indexFilesNow runs (the
 * checked add's), so that its set-up overlaps what hmm does before it (a
 * command's end recorded, the index checked, the gitlinks taken out). Used
 * only if that git's start is the same then (git.ts prepareGitScript); the
 * rest is as without.
 */
export function readFilesSoon(workspace: Workspace): void {
  try {
    prepareGitScript(CHECKED_ADD, checkedAddArgs(workspace), addOptions(workspace, indexEnv(workspace).env, readingOf(workspace)))
  } catch (error) {
    // Whatever went wrong goes wrong again, and is said, where git is run.
    debug(`could not start reading workspace ${workspace.label} ahead: ${(error as Error).message}`)
  }
}

/**
 * The tree of the workspace's files now as git wrote it into the private
 * repository, what `exclude` names included (treeNow leaves that out).
 */
export const filesTree = oncePerWorkspace(async (workspace: Workspace): Promise<string> => {
  const {env, datedAfter, tree: written} = await indexed(workspace)
  if (written) return written
  const tree = await gitLine(['write-tree', '--missing-ok'], {cwd: workspace.tree, env})
  // write-tree writes the index again, dated now: its entries of this second would be racily clean to the next git.
  if (datedAfter !== undefined) await dateIndexAfter(env.GIT_INDEX_FILE, datedAfter)
  return tree
})

/**
 * The tree of the workspace's files now, written into the private
 * repository: once per workspace per command, as its index is brought up to
 * date once (recording WORK asks for it again, and so do nested repositories' states).
 */
export const treeNow = oncePerWorkspace(async (workspace: Workspace): Promise<string> => {
  const tree = await filesTree(workspace)
  // What the config file's `exclude` names is never the command's to give back (git/excluded.ts).
  return workspace.row.forkTree ? keptAsRecorded(workspace, workspace.row.forkTree, tree) : tree
})

/** diff-tree arguments whose output no configuration can change. */
function diffArgs(request: DiffRequest): string[] {
  const {format, colour} = request
  return [
    ...(colour ?? []),
    ...(request.attributes ? ['-c', `core.attributesFile=${request.attributes}`] : []),
    'diff-tree',
    '-r',
    '-M',
    ...(format === 'patch' ? ['-p', '--binary', '--full-index'] : ['--stat']),
    ...(colour ? ['--color=always'] : ['--no-color']),
    ...PLAIN_PATCH,
  ]
}

const HEADER = Buffer.from('diff --git a/')

/**
 * git apply cannot read its own `diff --git a/X b/X` line when X has a
 * directory whose name ends in a space (`dir /file`): it splits the names at
 * the first space followed by a slash and gives up ("lacks filename
 * information"). Where the header is all a patch says of the file (a binary,
 * empty or mode-only change), hmm apply would fail. git quotes a name only for
 * control characters, quotes, backslashes and (with core.quotePath) bytes
 * above 127, so an unquoted one holds none of them: wrapping it in quotes is
 * its C-quoted form, which git apply reads whole.
 */
export function quoteAmbiguousHeaders(patch: Buffer): Buffer {
  const lines: Buffer[] = []
  let start = 0
  let changed = false
  while (start < patch.length) {
    const newline = patch.indexOf(10, start)
    const end = newline < 0 ? patch.length : newline + 1
    let line = patch.subarray(start, end)
    if (line.subarray(0, HEADER.length).equals(HEADER)) {
      const names = line.subarray('diff --git '.length, newline < 0 ? line.length : line.length - 1).toString('latin1')
      const half = (names.length - 1) / 2
      const [a, b] = [names.slice(0, half), names.slice(half + 1)]
      if (Number.isInteger(half) && names[half] === ' ' && a.slice(2) === b.slice(2) && b.startsWith('b/') && / \//.test(a)) {
        line = Buffer.from(`diff --git "${a}" "${b}"${newline < 0 ? '' : '\n'}`, 'latin1')
        changed = true
      }
    }
    lines.push(line)
    start = end
  }
  return changed ? Buffer.concat(lines) : patch
}

export interface DiffRequest {
  format: 'patch' | 'stat'
  /** Colour for a terminal, with the user's `-c color.diff.*=...` settings; undefined: none. */
  colour?: string[]
  /** The width git's stat fits in (a terminal's), else git's default. */
  columns?: number
  /** An attributes file of hmm's, below the origin's own (git/text-shown.ts). */
  attributes?: string
}

/** An uncoloured patch as git apply reads it (a coloured one is for a person's eyes only). */
function readable(request: DiffRequest, output: Buffer): Buffer {
  return request.format === 'patch' && !request.colour ? quoteAmbiguousHeaders(output) : output
}

/**
 * Whether a patch or stat may have been shaped by an attribute file the
 * workspace changed: git takes `diff`/`binary` from the .gitattributes it
 * finds with the changes, so the command's own `*.sh -diff` would show a
 * script's new line as a binary patch. Naming one anywhere counts: the
 * output is then made again (renderedAsFrom), which is always right, only slower.
 */
const mayUseOwnAttributes = (output: Buffer) => output.includes('.gitattributes')

/**
 * The patch (or stat) from `from` to `to` with the attribute files of
 * `from` (the fork tree: the origin's, which the command could not choose)
 * deciding what is text: git finds them in the index it is given, there
 * being no attribute file in the private repository's directory, its work
 * tree here.
 */
async function renderedAsFrom(workspace: Workspace, args: string[], env: Record<string, string>, from: string): Promise<Buffer> {
  const index = join(workspace.gitDir, `index.render-${process.pid}`)
  try {
    await git(['read-tree', from], {cwd: workspace.gitDir, env: {...env, GIT_INDEX_FILE: index}})
    return (await gitBytes(args, {cwd: workspace.gitDir, env: {...env, GIT_INDEX_FILE: index}})).stdout
  } finally {
    rmSync(index, {force: true})
  }
}

/** The patch (or stat) from one recorded tree to another, as bytes. */
export async function treeDiff(workspace: Workspace, from: string, to: string, request: DiffRequest): Promise<Buffer> {
  // Origins recorded by hashes only: the recorded side's contents come from the base clone.
  if (workspace.row.originKind === 'plain') await ensureBaseBlobs(workspace.gitDir, workspace.base, from, to)
  const repo = privateRepo(workspace.gitDir)
  const env: Record<string, string> = {...privateEnv(repo)}
  if (request.columns) env.COLUMNS = String(request.columns)
  const args = [...diffArgs(request), from, to]
  const output = (await gitBytes(args, {cwd: workspace.gitDir, env})).stdout
  return readable(request, mayUseOwnAttributes(output) ? await renderedAsFrom(workspace, args, env, from) : output)
}
