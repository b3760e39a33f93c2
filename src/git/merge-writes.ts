// What a merge of the workspace's commits would write or remove in the
// origin's files, and which of those files git does not track there (SPEC
// merge: "never overwrites or removes a file of the origin that is
// untracked or ignored there"). git refuses to overwrite an untracked file
// but replaces an ignored one (a `.env`, a `.venv/bin/activate`) by
// default, and merge-ort does even with --no-overwrite-ignore (checked with
// git 2.39: it only holds for a fast-forward). So hmm finds them itself,
// before anything is fetched into the origin.
//
// The paths a merge writes or removes are those the commits change from
// each merge base with the origin's HEAD (for a fast-forward, HEAD), and
// those the merge's result, as `git merge-tree` makes it (git 2.38 on),
// holds otherwise than HEAD (a rename on one side puts the other side's new
// file elsewhere). One of the origin's files is in the way of such a path
// when the origin's index does not hold it and it is there: at the path, at
// a directory above it (which git removes to make the directory), or below
// it (a directory git removes to write the file). So is a nested
// repository's directory the index holds as a gitlink (a submodule, or a
// repository added as one), not empty, where the merge leaves no gitlink
// and does not merely delete it: git removes it whole to write a file
// there or above, with the files and history that exist only there; the
// superproject tracks none of them.
//
// The commits and the trees are read in hmm's private repository (which
// sees the origin's objects); the origin is only read.
import {lstatSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {entriesIn, isWithin, namesIn} from '../sandbox/paths.js'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, git, gitLine, NOT_UTF8} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

export interface MergeWrites {
  /** What the paths are changed from: the merge bases, or the empty tree for an origin without commits. */
  bases: string[]
  /** The paths the merge would write or remove. */
  paths: Set<string>
  /** The tree the merge would leave: the tip's for a fast-forward (or where git cannot tell), else merge-tree's. */
  result: string
}

export interface Untracked {
  path: string
  /**
   * Not tracked at all, ignored, a nested repository's directory (a gitlink
   * in the index) holding files, or a name that is not UTF-8 like one the
   * origin has (`unsure`: which of them git means cannot be told).
   */
  kind: 'untracked' | 'ignored' | 'nested' | 'unsure'
}

function onPrivate(workspace: Workspace) {
  return {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
}

const nulSeparated = (text: string) => text.split('\0').filter(Boolean)

/** The paths a merge of `tip` into the origin's HEAD would write or remove. */
export async function mergeWrites(workspace: Workspace, origin: string, tip: string): Promise<MergeWrites> {
  const onIt = onPrivate(workspace)
  const head = (await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {cwd: origin, okStatuses: [1]})).stdout.trim()
  const found = head ? (await git(['merge-base', '--all', head, tip], {...onIt, okStatuses: [1]})).stdout.split('\n').filter(Boolean) : []
  const bases = found.length > 0 ? found : [await gitLine(['mktree'], {...onIt, input: ''})]
  const changed = async (from: string, to: string) =>
    nulSeparated((await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--name-only', from, to], onIt)).stdout)
  const paths = new Set((await Promise.all(bases.map(base => changed(base, tip)))).flat())
  let result = tip
  if (head && !found.includes(head)) {
    // Not a fast-forward. An older git without --write-tree says so (status 129), and the paths above are all there is.
    const merged = await git(['merge-tree', '--write-tree', head, tip], {...onIt, okStatuses: [1, 128, 129]})
    const tree = merged.stdout.split('\n', 1)[0]
    if (merged.exitCode <= 1 && /^[0-9a-f]{40,64}$/.test(tree)) {
      for (const path of await changed(head, tree)) paths.add(path)
      result = tree
    }
  }
  return {bases, paths, result}
}

/** Each path of the entries of `git ls-files -s -z` or `git ls-tree -z`, with its mode. */
function modesOf(entries: string[]): Map<string, string> {
  return new Map(entries.map(entry => [entry.slice(entry.indexOf('\t') + 1), entry.slice(0, entry.indexOf(' '))]))
}

const GITLINK = '160000'
const TREE = '040000'

/** The directories above a path, outermost first. */
const above = (path: string) => {
  const names = path.split('/')
  return names.slice(1).map((_, at) => names.slice(0, at + 1).join('/'))
}

/**
 * The gitlinks of the origin's index whose directories hold files and that
 * the merge's result does not keep as gitlinks, or merely delete (a tree
 * on the way to them, as git leaves a directory it cannot empty): git
 * would remove them whole.
 */
async function nestedInTheWay(
  workspace: Workspace,
  origin: string,
  gitlinks: string[],
  {paths, result}: Pick<MergeWrites, 'paths' | 'result'>,
): Promise<string[]> {
  const held = gitlinks.filter(path => {
    // Not UTF-8: its directory cannot be named; anything reading as it counts (attacker's review 26, F5).
    if (path.includes(NOT_UTF8)) return entriesReadingAs(origin, path) > 0
    return namesIn(join(origin, path)).length > 0
  })
  if (held.length === 0) return []
  // Each named with the directories above it (which ls-tree lists only so, where one is not a tree). Literal: the paths
  // are the origin's names.
  const asked = [...new Set(held.flatMap(path => [...above(path), path]))]
  const on = onPrivate(workspace)
  const listed = await git(['ls-tree', '-z', '-t', result, '--', ...asked], {...on, env: {...on.env, GIT_LITERAL_PATHSPECS: '1'}})
  const modes = modesOf(nulSeparated(listed.stdout))
  return held.filter(path => {
    // Its name not asked of git as it is: in the way wherever the merge changes it, or above or below it.
    if (path.includes(NOT_UTF8)) return [...paths].some(changed => changed === path || isWithin(changed, path) || isWithin(path, changed))
    const mode = modes.get(path)
    if (mode === GITLINK) return false
    return mode !== undefined || above(path).some(dir => modes.has(dir) && modes.get(dir) !== TREE)
  })
}

/**
 * How many entries the origin has at `path`, some of whose names are not
 * UTF-8 as git gave them (NOT_UTF8): those whose names read as the path's
 * do, directory by directory.
 */
function entriesReadingAs(origin: string, path: string): number {
  let at = [Buffer.from(origin)]
  for (const name of path.split('/')) {
    at = at.flatMap(dir => {
      try {
        return readdirSync(dir, {encoding: 'buffer'})
          .filter(entry => entry.toString('utf8') === name)
          .map(entry => Buffer.concat([dir, Buffer.from('/'), entry]))
      } catch {
        return []
      }
    })
  }
  return at.length
}

/** The directories at or beneath `dir` (from the origin's top) that hold a `.git`, not entering one nor following links. */
function repositoriesBeneath(origin: string, dir: string): string[] {
  const found: string[] = []
  const walk = (rel: string) => {
    const entries = entriesIn(join(origin, rel))
    if (entries.some(entry => entry.name === '.git')) found.push(rel)
    for (const entry of entries) if (entry.isDirectory() && entry.name !== '.git') walk(`${rel}/${entry.name}`)
  }
  walk(dir)
  return found
}

/** The files of the origin that are in the way of what the merge writes and that its index does not hold, sorted. */
export async function untrackedInTheWay(workspace: Workspace, origin: string, {paths, result}: MergeWrites): Promise<Untracked[]> {
  if (paths.size === 0) return []
  const entries = nulSeparated((await git(['ls-files', '-s', '-z'], {cwd: origin})).stdout)
  const index = modesOf(entries)
  const tracked = new Set(index.keys())
  // Entries whose names read alike are one key of `index`: counted here.
  const trackedAs = (path: string) => entries.filter(entry => entry.endsWith(`\t${path}`)).length
  const files = new Set<string>()
  const directories = new Set<string>()
  const found: Untracked[] = []
  for (const path of paths) {
    if (path.includes(NOT_UTF8)) {
      // Nothing there that reads alike, or only the one file the index tracks (which git handles).
      const there = entriesReadingAs(origin, path)
      if (there > 0 && !(there === 1 && trackedAs(path) === 1)) found.push({path, kind: 'unsure'})
      // Still looked at as below: a file of the origin above it reads as it is (attacker's review 26, F1).
    }
    const names = path.split('/')
    let above: string | undefined
    for (let depth = 1; depth < names.length && above === undefined; depth++) {
      const dir = names.slice(0, depth).join('/')
      const stat = lstatSync(join(origin, dir), {throwIfNoEntry: false})
      if (!stat) above = ''
      else if (!stat.isDirectory()) above = dir
    }
    if (above === '') continue
    if (above !== undefined) {
      if (!tracked.has(above)) files.add(above)
      continue
    }
    const stat = lstatSync(join(origin, path), {throwIfNoEntry: false})
    // A directory the index holds at the path is a submodule's, whose files git leaves alone.
    if (!stat || tracked.has(path)) continue
    if (stat.isDirectory()) directories.add(path)
    else files.add(path)
  }
  if (files.size > 0) {
    const ignored = await git(['check-ignore', '-z', '--stdin'], {cwd: origin, input: [...files].map(path => `${path}\0`).join(''), okStatuses: [1]})
    const ignoredFiles = new Set(nulSeparated(ignored.stdout))
    for (const path of files) found.push({path, kind: ignoredFiles.has(path) ? 'ignored' : 'untracked'})
  }
  const gitlinks = [...index].filter(([, mode]) => mode === GITLINK).map(([path]) => path)
  for (const path of await nestedInTheWay(workspace, origin, gitlinks, {paths, result})) found.push({path: `${path}/`, kind: 'nested'})
  if (directories.size > 0) {
    // What git does not track below them; a directory holding nothing tracked is named once, as `dir/`.
    const within = [...directories].map(dir => `:(literal)${dir}`)
    const list = async (more: string[]) =>
      nulSeparated((await git(['ls-files', '-z', '--others', '--directory', ...more, '--', ...within], {cwd: origin})).stdout)
    const [untracked, ignored] = await Promise.all([list(['--exclude-standard']), list(['--ignored', '--exclude-standard'])])
    for (const path of untracked) found.push({path, kind: 'untracked'})
    for (const path of ignored) found.push({path, kind: 'ignored'})
    // git lists no `.git`: a repository the user made in a directory it tracks files of (attacker's review 26, F2).
    for (const dir of directories) for (const repository of repositoriesBeneath(origin, dir)) found.push({path: `${repository}/`, kind: 'nested'})
  }
  const once = new Map(found.map(entry => [entry.path, entry]))
  return [...once.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
