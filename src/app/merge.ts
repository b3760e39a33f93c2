// `hmm merge [WS]`: the commits made in the workspace, merged into the
// branch the origin is on as `git merge` would (fast-forward when it can,
// else a merge commit `Merge workspace <label>`; conflicts left to resolve).
// Only commits: uncommitted changes stay in the workspace, with a warning.
//
// Security: the commits come out through git/bundle.ts (git runs on the
// workspace's repository only inside the sandbox; every object is checked
// on its way into the origin). `git merge` then runs in the origin, the
// user's own repository, with the user's own config, hooks and filters (an
// origin using git-lfs keeps working): commits that would make its checkout
// write other bytes than hmm diff shows (attributes naming a filter or a
// conversion, a .lfsconfig saying where git-lfs fetches from) are refused
// before anything is fetched (git/conversions.ts), so the only filters that
// run are those the origin's own attributes name.
import {resolve} from 'node:path'
import {say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {recordWork} from '../workspaces/work.js'
import {stillMerging} from '../workspaces/merging.js'
import {hmmRef} from '../git/bundle.js'
import {takeForGit, warnUncommitted} from './commits.js'
import {warnNested} from './taking.js'
import {git, gitLine, gitMessages} from '../git/git.js'
import {relabelConflicts, unmergedPaths} from '../git/conflicts.js'
import {programPath} from '../platform/programs.js'

async function headOf(origin: string): Promise<string | undefined> {
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {cwd: origin, okStatuses: [1]})
  return head.stdout.trim() || undefined
}

/** `<branch> of <origin>`: where a merge goes, as the user knows it. */
async function mergeTarget(origin: string): Promise<string> {
  const branch = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], {cwd: origin, okStatuses: [1, 128]})
  const name = branch.stdout.trim()
  return name ? `${name} of ${origin}` : `the detached HEAD of ${origin}`
}

/** Returns the exit status. */
export async function mergeWorkspace(key: string | undefined, options: {force: boolean}): Promise<number> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const taken = await takeForGit(context, workspace, {
      noCommits: `workspace ${workspace.label} has no commits to merge: hmm apply applies its changes`,
      force: options.force,
      checkedOut: true,
    })
    const origin = taken.origin
    const target = await mergeTarget(origin)
    const before = await headOf(origin)
    // takeForGit refused files git does not track in the way; should one be missed, git itself refuses where it can.
    const merged = await git(['merge', '--no-edit', '--no-overwrite-ignore', '-m', `Merge workspace ${workspace.label}`, hmmRef(workspace)], {
      cwd: origin,
      okStatuses: [1, 2, 128],
    })
    if (merged.exitCode !== 0) {
      const mergeHead = resolve(origin, await gitLine(['rev-parse', '--git-path', 'MERGE_HEAD'], {cwd: origin}))
      // Conflicts are this merge's only where git started it: in an origin with a merge of the user's own going on, or
      // conflicts already in its index, git refuses to start one, and those conflicts are the user's.
      const unmerged = stillMerging(mergeHead, taken.tip) ? await unmergedPaths({cwd: origin}) : []
      if (unmerged.length > 0) {
        relabelConflicts(origin, unmerged, [{marker: '>>>>>>>', from: hmmRef(workspace), to: `workspace ${workspace.label}`}])
        // The user ends this merge without hmm: what tells that it was committed, and what it takes back then.
        const pending = {tip: taken.tip, mergeHead, git: programPath('git') ?? 'git', commits: null, files: null, taken: null}
        context.store.update(workspace.id, {pendingMerge: pending})
        await recordWork(context.store, workspace, context.data)
        say(`merging workspace ${workspace.label} into ${target} stopped at conflicts: resolve them and commit (git status lists them)`)
      } else {
        say(`could not merge workspace ${workspace.label} into ${target}:`)
        for (const line of gitMessages(merged.stderr || merged.stdout)) say(line)
      }
      warnUncommitted(workspace, taken)
      await warnNested(workspace)
      return 1
    }
    context.store.update(workspace.id, {pendingMerge: null})
    await recordWork(context.store, workspace, context.data)
    const after = await headOf(origin)
    const how = after === taken.tip && before !== taken.tip ? ' (fast-forward)' : before === after ? ' (already merged)' : ''
    say(`merged workspace ${workspace.label} into ${target}${how}`)
    warnUncommitted(workspace, taken)
    await warnNested(workspace)
    return 0
  } finally {
    context.close()
  }
}
