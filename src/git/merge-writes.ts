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
// it (a directory git removes to write the file).
//
// The commits and the trees are read in hmm's private repository (which
// sees the origin's objects); the origin is only read.
import {lstatSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, git, gitLine} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

export interface MergeWrites {
  /** What the paths are changed from: the merge bases, or the empty tree for an origin without commits. */
  bases: string[]
  /** The paths the merge would write or remove. */
  paths: Set<string>
}

export interface Untracked {
  path: string
  ignored: boolean
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
  if (head && !found.includes(head)) {
    // Not a fast-forward. An older git without --write-tree says so (status 129), and the paths above are all there is.
    const merged = await git(['merge-tree', '--write-tree', head, tip], {...onIt, okStatuses: [1, 128, 129]})
    const tree = merged.stdout.split('\n', 1)[0]
    if (merged.exitCode <= 1 && /^[0-9a-f]{40,64}$/.test(tree)) for (const path of await changed(head, tree)) paths.add(path)
  }
  return {bases, paths}
}

/** The files of the origin that are in the way of the paths and that its index does not hold, sorted. */
export async function untrackedInTheWay(origin: string, paths: Set<string>): Promise<Untracked[]> {
  if (paths.size === 0) return []
  const tracked = new Set(nulSeparated((await git(['ls-files', '-z'], {cwd: origin})).stdout))
  const files = new Set<string>()
  const directories = new Set<string>()
  for (const path of paths) {
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
  const found: Untracked[] = []
  if (files.size > 0) {
    const ignored = await git(['check-ignore', '-z', '--stdin'], {cwd: origin, input: [...files].map(path => `${path}\0`).join(''), okStatuses: [1]})
    const ignoredFiles = new Set(nulSeparated(ignored.stdout))
    for (const path of files) found.push({path, ignored: ignoredFiles.has(path)})
  }
  if (directories.size > 0) {
    // What git does not track below them; a directory holding nothing tracked is named once, as `dir/`.
    const within = [...directories].map(dir => `:(literal)${dir}`)
    const list = async (more: string[]) =>
      nulSeparated((await git(['ls-files', '-z', '--others', '--directory', ...more, '--', ...within], {cwd: origin})).stdout)
    const [untracked, ignored] = await Promise.all([list(['--exclude-standard']), list(['--ignored', '--exclude-standard'])])
    for (const path of untracked) found.push({path, ignored: false})
    for (const path of ignored) found.push({path, ignored: true})
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
