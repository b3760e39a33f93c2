// What diff, apply, merge and pr check before they look at a workspace:
// that it was finished, that its tree is still there, that it is not
// running (apply, merge and pr change the origin, so they wait until the
// command is done), and that the origin is still there.
//
// Security: a tree deleted by hand must be an error, never "the command
// deleted every file" — an apply of that would empty the origin. So the
// tree is checked to be a real directory (lstat, no link followed) before
// anything is compared with it.
import {lstatSync} from 'node:fs'
import {isAbsolute, join, relative, resolve} from 'node:path'
import {nestedChanges} from '../git/nested-work.js'
import {HmmError, warn} from '../ui/errors.js'
import {listPaths, printable, shellWord} from '../ui/format.js'
import {status} from '../workspaces/status.js'
import type {Workspace} from '../workspaces/workspace.js'

/** The workspace was made and its tree is a directory; returns the recorded fork tree. */
export function checkUsable(workspace: Workspace): string {
  if (workspace.row.state !== 'ready' || !workspace.row.forkTree) {
    throw new HmmError(`workspace ${workspace.label} was never finished (hmm was stopped while making it); hmm rm removes it`)
  }
  const tree = lstatSync(workspace.tree, {throwIfNoEntry: false})
  if (!tree?.isDirectory()) {
    throw new HmmError(`workspace ${workspace.label} has no tree any more (${workspace.tree} is gone); hmm rm removes it`)
  }
  return workspace.row.forkTree
}

export function checkNotRunning(workspace: Workspace): void {
  if (status(workspace) === 'running') throw new HmmError(`workspace ${workspace.label} is running (hmm stop ${workspace.id} ends it)`)
}

export function checkOrigin(workspace: Workspace): string {
  const origin = workspace.row.origin
  if (!lstatSync(origin, {throwIfNoEntry: false})?.isDirectory()) {
    throw new HmmError(`${origin}, where workspace ${workspace.label} was made from, no longer exists`)
  }
  return origin
}

/**
 * What is to be taken is what the user last looked at: the files (`tree`,
 * the tree of them now) those hmm diff last showed, the commits (`tip`,
 * for merge and pr) those hmm log -p last showed (workspaces/store.ts
 * shownTree, shownTip). A process the command left can change them after
 * the user looked (when hmm stop signals it, or once it sees hmm read
 * them; without the namespaces, unseen by hmm after its keeper was killed),
 * so what is taken would be what the user never saw.
 */
export function checkShown(
  workspace: Workspace,
  now: {tree: string; tip?: string},
  {shownTree, statTree}: {shownTree: string | null; statTree: string | null} = workspace.row,
): void {
  const {shownTip} = workspace.row
  // A diff of some paths shows only those: what it did not show may be all that differs.
  const changedSince = (command: string) =>
    new HmmError(
      command === 'diff'
        ? `workspace ${workspace.label} changed since hmm diff showed it, or was shown only in part (hmm diff ${workspace.id} shows all of it as it is now)`
        : `workspace ${workspace.label} changed since hmm ${command} showed it (hmm ${command} ${workspace.id} shows it as it is now)`,
    )
  // The user did look at the files as they are now, in a summary that shows none of their content.
  const onlyStat = () =>
    new HmmError(
      `workspace ${workspace.label} changed since hmm diff showed it; hmm diff --stat shows no content, so it does not count (hmm diff ${workspace.id} shows it as it is now)`,
    )
  // The commits first: they are what merge and pr take, and hmm log -p is where they are looked at.
  if (now.tip !== undefined && shownTip !== null && shownTip !== now.tip) throw changedSince('log -p')
  if (shownTree !== null && shownTree !== now.tree) throw statTree === now.tree ? onlyStat() : changedSince('diff')
}

/**
 * checkShown for what lies under some paths only (`hmm apply -- PATH`):
 * what the diffs showed there against what is there now (`nowUnder`), the
 * rest left out of both (`part`: a tree with only what changed under them).
 */
export async function checkShownUnder(workspace: Workspace, nowUnder: string, part: (tree: string) => Promise<string>): Promise<void> {
  const {shownTree, statTree} = workspace.row
  const partOf = async (tree: string | null) => (tree === null ? null : part(tree))
  checkShown(workspace, {tree: nowUnder}, {shownTree: await partOf(shownTree), statTree: await partOf(statTree)})
}

/** All of the above, for the commands that change the origin. */
export function checkTakeable(workspace: Workspace): {forkTree: string; origin: string} {
  checkNotRunning(workspace)
  const forkTree = checkUsable(workspace)
  return {forkTree, origin: checkOrigin(workspace)}
}

/**
 * The paths given to diff and apply (`-- PATH...`, relative to the working
 * directory) as git's pathspecs from the origin's top; undefined: all of it.
 */
export function pathspecsOf(workspace: Workspace, cwd: string, paths: string[] | undefined): string[] | undefined {
  if (!paths || paths.length === 0) return undefined
  const origin = workspace.row.origin
  return paths.map(path => {
    const fromTop = relative(origin, resolve(cwd, path))
    if (fromTop === '..' || fromTop.startsWith('../') || isAbsolute(fromTop)) {
      throw new HmmError(`${path} is outside ${origin}, where workspace ${workspace.label} was made from`)
    }
    return fromTop || '.'
  })
}

/**
 * Says, one line each, which nested repositories hold changes that hmm does
 * not take back (apply, merge, pr), and how the user can take them; returns
 * whether there were any. Such changes keep the workspace from counting as
 * taken back (workspaces/work.ts).
 */
export async function warnNested(workspace: Workspace): Promise<boolean> {
  const changes = await nestedChanges(workspace)
  for (const {path} of changes) {
    warn(
      `workspace ${workspace.label}'s nested repository ${printable(path)} has changes that hmm does not take back: look at them with hmm exec ${workspace.id} git -C ${printable(shellWord(join(workspace.tree, path)))} status, and copy what you want from there`,
    )
  }
  return changes.length > 0
}

/** Says, in one line, which nested repositories hold changes that hmm diff does not show. */
export async function warnNestedNotShown(workspace: Workspace): Promise<void> {
  const paths = (await nestedChanges(workspace)).map(change => change.path)
  if (paths.length === 0) return
  const which = paths.length === 1 ? `repository ${printable(paths[0])} has` : `repositories ${listPaths(paths)} have`
  warn(`workspace ${workspace.label}'s nested ${which} changes that hmm diff does not show`)
}
