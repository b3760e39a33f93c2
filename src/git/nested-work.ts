// What the workspace's nested repositories hold, so that work in them is
// never lost by accident. hmm records a nested repository as a gitlink (its
// HEAD commit) and takes back nothing more: not its commits' objects, not
// its uncommitted files (SPEC, "Taking work back"). So each one's state is
// recorded when the workspace is made (its HEAD and the tree of its files,
// ignored ones aside, nested ones again as gitlinks, and so on down) and
// compared later: a nested repository whose state differs, or that appeared
// or went, holds work hmm cannot take back (rm and prune keep the workspace,
// WORK counts it, diff, apply and merge name it).
//
// Security: git never runs in a nested repository, inside the sandbox or
// out: its files are hashed into an index of hmm's private repository
// (GIT_DIR the private one, the nested repository only the work tree; git
// skips its `.git`), confined as every git reading the workspace is, so its
// config, hooks, fsmonitor and filters are never read. A race swapping a
// nested repository for a link can only make its state differ: counted as
// work, never lost.
import {createHash} from 'node:crypto'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {readerOf} from '../platform/confined.js'
import type {Workspace} from '../workspaces/workspace.js'
import {gitlinksNow, treeNow} from './changes.js'
import {git, gitScript} from './git.js'
import {checkFirstIndex, trustFreshIndex} from './first-index.js'
import {distrustRecentEntries} from './index-trust.js'
import {gitlinksIn, type Gitlink} from './nested.js'
import {oncePerWorkspace} from './per-workspace.js'
import {privateEnv, privateRepo, privateRepoSources} from './private-repo.js'

/** Each nested repository's state by its path in the tree: `<HEAD> <tree of its files>`; a tree `?` where it could not be read. */
export type NestedStates = Record<string, string>

/** Where the states at creation are kept, in the private repository. */
const FORK_FILE = 'nested-fork.json'

/** Nested repositories nested deeper than this are not looked into: their parent counts as changed. */
const MAX_DEPTH = 16

/**
 * For each pair of arguments (an index of the private repository, a nested
 * repository's work tree), the tree of its files on one line, `?` if git
 * could not write it. One sandbox for all of them.
 */
const NESTED_TREES = `git=$1; shift
while [ $# -gt 1 ]; do
  (cd "$2" && GIT_INDEX_FILE=$1 GIT_WORK_TREE=$2 "$git" add --all -- . >&2 && GIT_INDEX_FILE=$1 "$git" write-tree --missing-ok) || echo '?'
  shift 2
done`

function indexOf(workspace: Workspace, path: string): string {
  // Beside the private repository's own index: what reads an index finds the object format in the config there.
  return join(workspace.gitDir, `nested-${createHash('sha256').update(path).digest('hex').slice(0, 32)}.index`)
}

/**
 * The states of the nested repositories whose gitlinks are given, and of
 * those nested in them. `fresh`: the tree was just made, nobody touched it
 * (the entries of this second are checked later, as the first index's are).
 */
async function statesOf(workspace: Workspace, gitlinks: Gitlink[], fresh: boolean): Promise<NestedStates> {
  const states: NestedStates = {}
  if (gitlinks.length === 0) return states
  const repo = privateRepo(workspace.gitDir)
  const reading = {label: workspace.label, reader: readerOf(workspace, workspace.data, workspace.gitDir, privateRepoSources(workspace.gitDir))}
  let level = gitlinks
  for (let depth = 0; level.length > 0; depth++) {
    if (depth === MAX_DEPTH) {
      for (const link of level) states[link.path] = `${link.id} ?`
      break
    }
    const dirs = level.map(link => ({link, index: indexOf(workspace, link.path), dir: join(workspace.tree, link.path)}))
    if (!fresh) for (const {index, dir} of dirs) await checkFirstIndex(index, dir)
    const looked = Date.now()
    const result = await gitScript(
      'add (nested repositories)',
      NESTED_TREES,
      dirs.flatMap(({index, dir}) => [index, dir]),
      {cwd: workspace.gitDir, env: privateEnv(repo), readsWorkspace: reading},
    )
    const trees = result.stdout.split('\n')
    const next: Gitlink[] = []
    for (const [n, {link, index}] of dirs.entries()) {
      const tree = /^[0-9a-f]{40,64}$/.test(trees[n] ?? '') ? trees[n] : '?'
      states[link.path] = `${link.id} ${tree}`
      if (tree === '?') continue
      if (fresh) await trustFreshIndex(index)
      else await distrustRecentEntries(index, looked)
      const inner = await gitlinksIn({index, cwd: workspace.gitDir, env: {...privateEnv(repo), GIT_INDEX_FILE: index}})
      next.push(...inner.map(found => ({path: `${link.path}/${found.path}`, id: found.id})))
    }
    level = next
  }
  return states
}

/** The gitlinks of the workspace's private index (brought up to date by the caller), else of `tree`. */
async function gitlinksOf(workspace: Workspace, tree: string): Promise<Gitlink[]> {
  const repo = privateRepo(workspace.gitDir)
  const env = privateEnv(repo)
  if (existsSync(repo.index)) return gitlinksIn({index: repo.index, cwd: workspace.gitDir, env})
  const listed = await git(['ls-tree', '-r', '-z', '--full-tree', tree], {cwd: workspace.gitDir, env})
  return listed.stdout
    .split('\0')
    .filter(line => line.startsWith('160000 '))
    .map(line => ({path: line.slice(line.indexOf('\t') + 1), id: line.split(' ')[2].split('\t')[0]}))
}

/** Records the states of the nested repositories of a workspace just made, before its command starts. */
export async function recordNestedFork(workspace: Workspace, forkTree: string): Promise<void> {
  const states = await statesOf(workspace, await gitlinksOf(workspace, forkTree), true)
  writeFileSync(join(workspace.gitDir, FORK_FILE), JSON.stringify(states))
}

/** The states recorded when the workspace was made; undefined for one made before hmm recorded them. */
function forkStates(workspace: Workspace): NestedStates | undefined {
  try {
    return JSON.parse(readFileSync(join(workspace.gitDir, FORK_FILE), 'utf8')) as NestedStates
  } catch {
    return undefined
  }
}

/** A nested repository whose state differs from the one it was made with; `moved`: its HEAD did. */
export interface NestedChange {
  path: string
  moved: boolean
}

/** The nested repositories that changed since the workspace was made, by path (found once per workspace per command). */
export const nestedChanges = oncePerWorkspace(changesSince)

async function changesSince(workspace: Workspace): Promise<NestedChange[]> {
  // The private index brought up to date with the files: its gitlinks are the nested repositories there now.
  const now = await statesOf(workspace, (await gitlinksNow(workspace)) ?? (await gitlinksOf(workspace, await treeNow(workspace))), false)
  // Made before hmm recorded them: every nested repository there is counts as changed.
  const fork = forkStates(workspace) ?? {}
  const paths = [...new Set([...Object.keys(fork), ...Object.keys(now)])].sort()
  const head = (state: string | undefined) => state?.split(' ')[0]
  return paths.filter(path => fork[path] !== now[path] || now[path].endsWith(' ?')).map(path => ({path, moved: head(fork[path]) !== head(now[path])}))
}
