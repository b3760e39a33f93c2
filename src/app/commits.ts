// The commits of a workspace as merge and pr take them: the checks both
// make (a git top-level origin, commits since the workspace was made), the
// commits fetched into refs/hmm/<id> (git/bundle.ts), what rm may then count as
// taken back, and the warning about changes that were not committed.
//
// Security: see git/bundle.ts; nothing here runs git on the workspace's `.git`.
import {HmmError, say} from '../ui/errors.js'
import type {Context} from '../workspaces/context.js'
import {stateKey} from '../workspaces/work.js'
import type {Workspace} from '../workspaces/workspace.js'
import {takeCommits, workspaceCommits, type TakenCommits} from '../git/bundle.js'
import {gitOriginOf} from '../git/origin.js'
import {checkTakeable} from './taking.js'

/**
 * The workspace's commits in the origin as refs/hmm/<id>. `before` runs
 * once the cheap checks passed and before anything is fetched (pr finds its
 * remote there, so a missing remote fails with the origin untouched).
 */
export async function takeForGit(
  context: Context,
  workspace: Workspace,
  noCommits: string,
  before?: (origin: string) => Promise<void>,
): Promise<TakenCommits & {origin: string}> {
  const {origin} = checkTakeable(workspace)
  if (workspace.row.originKind !== 'git') throw new HmmError(`workspace ${workspace.label} was not made from the top of a git repository`)
  if (!(await gitOriginOf(origin))) throw new HmmError(`${origin} is no longer the top of a git repository`)
  const commits = workspaceCommits(workspace, noCommits)
  await before?.(origin)
  return {...(await takeCommits(workspace, context.data, origin, commits, noCommits)), origin}
}

/**
 * What rm may count as taken back: everything, unless the workspace holds
 * changes it did not commit — then only the commits, a state its files are
 * not in, so rm keeps asking for -f.
 */
export function takenState(taken: TakenCommits): string {
  return stateKey(taken.tip, taken.uncommitted ? taken.tipTree : taken.nowTree)
}

export function warnUncommitted(workspace: Workspace, taken: TakenCommits): void {
  if (taken.uncommitted) say(`workspace ${workspace.label} has changes it did not commit, which are not merged`)
}
