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
import {git, gitBytes, gitLine, PLAIN_PATCH} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

function onPrivate(workspace: Workspace) {
  return {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
}

const nulSeparated = (text: string) => new Set(text.split('\0').filter(Boolean))

/** The paths whose entries differ between two trees (or commits). */
async function pathsBetween(workspace: Workspace, from: string, to: string): Promise<Set<string>> {
  const changed = await git(['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to], onPrivate(workspace))
  return nulSeparated(changed.stdout)
}

/** The base of the workspace's commits: the origin's HEAD when it was made, or the empty tree. */
async function baseOf(workspace: Workspace): Promise<string> {
  return workspace.row.headCommit ?? gitLine(['mktree'], {...onPrivate(workspace), input: ''})
}

/**
 * The paths the commits up to `tip` change whose change hmm diff does not
 * show as they make it, sorted; `nowTree` is the workspace's files
 * (treeNow). The paths are those any commit touches (merges against their
 * first parent: what they bring in) and those whose content at the tip is
 * not the base's: a commit made on an older commit of the origin, merged
 * with the origin's HEAD keeping its own side, takes back what the origin
 * did since without touching it in any first-parent diff.
 */
export async function unshownChanges(workspace: Workspace, tip: string, nowTree: string): Promise<string[]> {
  const touched = await git(
    ['log', '-z', '--format=', '--name-only', '--no-renames', '--diff-merges=first-parent', ...commitRange(workspace, tip), '--'],
    onPrivate(workspace),
  )
  const base = await baseOf(workspace)
  const [originUncommitted, changedSince, net] = await Promise.all([
    pathsBetween(workspace, base, workspace.row.forkTree!),
    pathsBetween(workspace, tip, nowTree),
    pathsBetween(workspace, base, tip),
  ])
  const taken = new Set([...nulSeparated(touched.stdout), ...net])
  return [...taken].filter(path => originUncommitted.has(path) || !net.has(path) || changedSince.has(path)).sort()
}

/** The commits, newest first, one `<abbreviated id> <subject>` line each (as git log --oneline). */
export async function commitLines(workspace: Workspace, tip: string): Promise<string[]> {
  const log = await git(['log', '-z', '--no-show-signature', '--format=%h %s', ...commitRange(workspace, tip), '--'], onPrivate(workspace))
  return log.stdout.split('\0').filter(Boolean)
}

/**
 * The commits with their patches, newest first, as bytes no configuration
 * changes (as changes.ts's patches). A merge commit shows its change against
 * each parent it has: against the first alone (or none, git's default) it
 * could hide what it takes back of the origin's own commits (a merge with
 * `-s ours`).
 */
export async function commitPatches(workspace: Workspace, tip: string): Promise<Buffer> {
  const args = [
    'log',
    '--no-show-signature',
    '--format=%h %s',
    '-p',
    '--diff-merges=separate',
    '-M',
    '--no-color',
    ...PLAIN_PATCH,
    ...commitRange(workspace, tip),
    '--',
  ]
  return (await gitBytes(args, onPrivate(workspace))).stdout
}
