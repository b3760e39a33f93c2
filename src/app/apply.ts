// `hmm apply [--check] [--3way] [WS]`: the changes `hmm diff` shows, made
// in the origin's files — all or nothing (or, with --3way, conflict markers
// where the origin changed the same lines), nothing staged or committed,
// binary files byte for byte, for git and non-git origins alike. After hmm
// merge or an earlier apply, only what they did not take (appliedTree in
// workspaces/work.ts, which WORK and rm count from too).
//
// Security: `git apply` runs with hmm's private repository as its git
// directory and the origin as its work tree, so patch paths are relative to
// the origin (also when it is a subdirectory of a repository), no index is
// touched, and neither the workspace's nor the origin's configuration can
// change what is written (whitespace fixing is off: the bytes are applied as
// they are). git apply itself refuses paths that leave the work tree or go
// through a symbolic link (with --3way it does not: hmm checks those paths
// first). Everything is checked before anything is written. Nor can
// attributes make it write other bytes than hmm diff shows: a path that
// the origin's attribute files (or those the change brings) would convert
// is refused (git/conversions.ts).
// A symbolic link leading out of the tree is refused unless --force
// (git/links-out.ts): in the origin, the user's tools would follow it.
// --3way needs an index matching the origin's files: one of hmm's own, of
// the paths the patch touches, thrown away after.
import {lstatSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {HmmError, say} from '../ui/errors.js'
import {count, listPaths, printable, shellWord} from '../ui/format.js'
import {Context} from '../workspaces/context.js'
import {appliedTree, recordApplied, recordWork} from '../workspaces/work.js'
import {treeDiff, treeNow} from '../git/changes.js'
import {ALL_GITLINKS, git, gitMessages} from '../git/git.js'
import {relabelConflicts, unmergedPaths} from '../git/conflicts.js'
import {mergedTip} from '../git/merged.js'
import {privateEnv, privateRepo} from '../git/private-repo.js'
import {applyConversions} from '../git/conversions.js'
import {CONVERTED, refuseMarked} from './commits.js'
import {checkShown, checkShownUnder, checkTakeable, pathspecsOf, warnNested} from './taking.js'
import {selected} from '../git/tree-edit.js'
import type {Workspace} from '../workspaces/workspace.js'

function applyEnv(workspace: Workspace, origin: string): Record<string, string> {
  return {
    ...privateEnv(privateRepo(workspace.gitDir)),
    GIT_WORK_TREE: origin,
    // Never read or written without --index/--cached; pointed at nothing to be sure.
    GIT_INDEX_FILE: join(workspace.gitDir, 'index.apply-unused'),
  }
}

const APPLY = ['apply', '--binary', '--whitespace=nowarn']

/** A path as git's messages write it: control characters but tab and newline as `?`. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const asGitSays = (path: string) => path.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?')

/** git's reasons, one per line; a path of the patch (`paths`) that holds a newline, which git writes as it is, kept on its line. */
function reasons(stderr: string, paths: string[]): string[] {
  const named = paths.filter(path => path.includes('\n')).reduce((text, path) => text.replaceAll(asGitSays(path), printable(path)), stderr)
  const lines = gitMessages(named)
  return lines.length > 0 ? lines : ['git apply failed']
}

/** The paths that differ between two trees of the private repository; `written`: only those the second holds. */
async function pathsChanged(workspace: Workspace, from: string, to: string, written = false): Promise<string[]> {
  const args = ['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--name-only', ...(written ? ['--diff-filter=d'] : []), from, to]
  const changed = await git(args, {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))})
  return changed.stdout.split('\0').filter(path => path !== '')
}

/**
 * Whether a directory on the way to the path, in the origin, is a symbolic
 * link: git apply refuses such a path, but git apply --3way writes through it.
 */
function beyondSymlink(origin: string, path: string): boolean {
  const parts = path.split('/').slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const stat = lstatSync(join(origin, ...parts.slice(0, i)), {throwIfNoEntry: false})
    if (stat === undefined) return false
    if (!stat.isDirectory()) return true
  }
  return false
}

/**
 * git apply -3 of the patch: what applies is applied, conflict markers (that
 * name the workspace) where the origin changed the same lines. Returns the
 * conflicted paths, or git's reasons when it applied nothing.
 */
async function applyThreeWay(
  workspace: Workspace,
  origin: string,
  change: {base: string; now: string; patch: Buffer},
): Promise<{conflicted: string[]} | {reasons: string[]}> {
  const index = join(workspace.gitDir, 'index.apply-3way')
  rmSync(index, {force: true})
  const env = {...applyEnv(workspace, origin), GIT_INDEX_FILE: index}
  try {
    const paths = await pathsChanged(workspace, change.base, change.now)
    const linked = paths.find(path => beyondSymlink(origin, path))
    if (linked !== undefined) return {reasons: [`affected file '${linked}' is beyond a symbolic link`]}
    const present = paths.filter(path => lstatSync(join(origin, path), {throwIfNoEntry: false}))
    const indexed = await git(['update-index', '--add', '-z', '--stdin'], {
      cwd: origin,
      env,
      input: present.map(path => `${path}\0`).join(''),
      okStatuses: [128],
    })
    if (indexed.exitCode !== 0) return {reasons: reasons(indexed.stderr, paths)}
    const applied = await git([...APPLY, '--3way', '-'], {cwd: origin, env, input: change.patch, okStatuses: [1, 128]})
    const conflicted = await unmergedPaths({cwd: origin, env})
    if (applied.exitCode !== 0 && conflicted.length === 0) return {reasons: reasons(applied.stderr, paths)}
    relabelConflicts(origin, conflicted, [
      {marker: '<<<<<<<', from: 'ours', to: 'origin'},
      {marker: '>>>>>>>', from: 'theirs', to: `workspace ${workspace.label}`},
    ])
    return {conflicted}
  } finally {
    rmSync(index, {force: true})
  }
}

/** Returns the exit status. */
export async function applyWorkspace(key: string | undefined, options: {check: boolean; threeWay: boolean; force: boolean; paths?: string[]}): Promise<number> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const {forkTree, origin} = checkTakeable(workspace)
    const pathspecs = pathspecsOf(workspace, context.cwd, options.paths)
    const now = await treeNow(workspace)
    if (pathspecs) {
      // What lies under the paths is what must have been shown (a diff of them shows no more).
      const part = (tree: string) => selected(workspace, forkTree, tree, pathspecs)
      const under = await part(now)
      await checkShownUnder(workspace, under, part)
      // Paths under which the workspace changed nothing (mistyped, say) are not "already applied".
      if (now !== forkTree && under === forkTree) {
        throw new HmmError(`workspace ${workspace.label} changed nothing under ${options.paths!.map(printable).join(', ')}`)
      }
    } else checkShown(workspace, {tree: now})
    // Said first: whatever follows is about the rest.
    const nested = await warnNested(workspace)
    if (now === forkTree) {
      if (!nested) say(`workspace ${workspace.label} changed nothing`)
      return 0
    }
    // After hmm merge the origin's branch holds the workspace's commits: only the rest is to apply; after an
    // apply of some paths, only what it did not take.
    const merged = await mergedTip(workspace, origin)
    const base = (await appliedTree(workspace, merged)).tree
    // What this apply takes: everything, or what changed under the paths.
    const target = pathspecs ? await selected(workspace, base, now, pathspecs) : now
    const named = options.paths ? ` (${options.paths.map(printable).join(', ')})` : ''
    // Applied once everything was taken; until then what was is kept, for the next apply to start from.
    const record = () => {
      if (!options.check) recordApplied(workspace, target, merged)
    }
    if (target === base) {
      record()
      if (!options.check) await recordWork(context.store, workspace, context.data)
      say(`workspace ${workspace.label} is already applied to ${origin}${named}`)
      return 0
    }
    if (!options.force) {
      await refuseMarked(workspace, [base], target, {
        holding: `workspace ${workspace.label} holds`,
        resolution: `look at them with hmm diff ${workspace.id}; hmm apply --force ${workspace.id} takes them anyway`,
      })
    }
    // git apply writes a path through its attributes: none may make it write other bytes than shown.
    const converted = await applyConversions(workspace, origin, {paths: await pathsChanged(workspace, base, target, true), now: target})
    if (converted.length > 0) throw new HmmError(`workspace ${workspace.label} changes ${CONVERTED}: ${listPaths(converted)}`)
    const patch = await treeDiff(workspace, base, target, {format: 'patch'})
    const env = applyEnv(workspace, origin)
    /** Says it does not apply, git's reasons, and, where the origin changed the same lines, what takes the rest. */
    const refuse = (lines: string[]) => {
      say(`workspace ${workspace.label} does not apply to ${origin}`)
      for (const reason of lines) say(reason)
      if (!options.threeWay && lines.some(line => / patch does not apply$|^patch failed: /.test(line))) {
        const paths = options.paths ? ` -- ${options.paths.map(shellWord).join(' ')}` : ''
        say(`hmm apply --3way ${workspace.id}${paths} takes what applies and leaves conflict markers where ${origin} changed the same lines`)
      }
      return 1
    }

    const forward = await git([...APPLY, '--check', '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
    if (forward.exitCode === 0) {
      if (options.check) {
        say(`workspace ${workspace.label} applies to ${origin}`)
        return 0
      }
      const applied = await git([...APPLY, '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
      if (applied.exitCode !== 0) return refuse(reasons(applied.stderr, await pathsChanged(workspace, base, now)))
      record()
      await recordWork(context.store, workspace, context.data)
      say(`applied workspace ${workspace.label} to ${origin}${target === now ? '' : `${named.slice(0, -1)}; the rest stays in the workspace)`}`)
      return 0
    }
    const reverse = await git([...APPLY, '--check', '--reverse', '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
    if (reverse.exitCode === 0) {
      record()
      if (!options.check) await recordWork(context.store, workspace, context.data)
      say(`workspace ${workspace.label} is already applied to ${origin}${named}`)
      return 0
    }
    if (options.threeWay && !options.check) {
      const outcome = await applyThreeWay(workspace, origin, {base, now: target, patch})
      if ('conflicted' in outcome) {
        // Not recorded as applied: hmm cannot tell the user's resolution from the conflict thrown away.
        say(`workspace ${workspace.label} applied to ${origin} with conflicts in ${count(outcome.conflicted.length, 'file')}`)
        return 1
      }
      return refuse(outcome.reasons)
    }
    return refuse(reasons(forward.stderr, await pathsChanged(workspace, base, now)))
  } finally {
    context.close()
  }
}
