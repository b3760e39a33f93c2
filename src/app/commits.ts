// The commits of a workspace as merge and pr take them: the checks both
// make (a git top-level origin, commits since the workspace was made), the
// commits named, checked against what hmm diff shows (git/review.ts) and
// fetched into refs/hmm/<id> (git/bundle.ts), and the warning about changes that were not committed.
//
// Security: see git/bundle.ts; nothing here runs git on the workspace's `.git`.
import {HmmError, Refusal, say, warn, type RefusedPath} from '../ui/errors.js'
import type {Context} from '../workspaces/context.js'
import type {Workspace} from '../workspaces/workspace.js'
import {takeIntoOrigin, takeIntoPrivate, workspaceCommits, type TakenCommits} from '../git/bundle.js'
import {treeNow} from '../git/changes.js'
import {checkoutConversions} from '../git/conversions.js'
import {commitRecords, identitiesOf, refusedPaths, unshownChanges, type CommitRecord, type UnshownWhy} from '../git/review.js'
import {listPaths, printable} from '../ui/format.js'
import {gitOriginOf} from '../git/origin.js'
import {REFUSED} from '../git/refused-paths.js'
import {linksLeaving, type LinkOut} from '../git/links-out.js'
import {repositoriesMade, REPOSITORY_MADE} from '../git/repositories-made.js'
import {mergeWrites, untrackedInTheWay, type MergeWrites} from '../git/merge-writes.js'
import {excludedOf} from '../git/excluded.js'
import {checkShown, checkTakeable} from './taking.js'

/** Why merge and apply refuse files git converts as it writes them (git/conversions.ts). */
export const CONVERTED = 'files that git would write converted (by a filter, working-tree-encoding, ident or line ends), not as hmm diff shows them'

/** The workspace's commits, fetched into its private repository (not the origin); undefined when there are none. */
export async function commitsOutOf(context: Context, workspace: Workspace): Promise<string | undefined> {
  const commits = workspaceCommits(workspace)
  return commits && takeIntoPrivate(workspace, context.data, commits)
}

/**
 * A commit as hmm shows it: its line as git log --oneline prints it, and,
 * indented below, the rest of what a push of it publishes that the user
 * cannot know: an author or committer other than the user, headers other
 * than git's own (a signature, an encoding, anything), and the message's
 * body. `kinds` names which of those it has. All of it printable: the
 * user's terminal never gets the command's control characters.
 */
export interface ShownCommit {
  id: string
  line: string
  more: string[]
  kinds: string[]
}

function shown(record: CommitRecord, you: {author?: string; committer?: string}): ShownCommit {
  const more: string[] = []
  const kinds: string[] = []
  const add = (kind: string, lines: string[]) => {
    if (!kinds.includes(kind)) kinds.push(kind)
    more.push(...lines)
  }
  if (record.author !== you.author) add('author', [`Author: ${record.author}`])
  if (record.committer !== you.committer) add('committer', [`Committer: ${record.committer}`])
  for (const header of record.headers) add(header.startsWith(' ') ? kinds.at(-1)! : header.split(' ', 1)[0], [header])
  if (record.body) add('body', ['', ...record.body.split('\n')])
  return {
    id: record.id,
    line: printable(`${record.short} ${record.subject}`),
    more: more.map(line => (line === '' ? '' : `    ${printable(line)}`)),
    kinds: kinds.map(printable),
  }
}

/** The commits up to `tip`, newest first, as hmm shows them. */
export async function shownCommits(workspace: Workspace, tip: string): Promise<ShownCommit[]> {
  const [records, you] = await Promise.all([commitRecords(workspace, tip), identitiesOf(workspace.row.origin)])
  return records.map(record => shown(record, you))
}

/**
 * The workspace's commits in the origin as refs/hmm/<id>, named first, and
 * refused (unless `force`) when they change what the workspace's files do
 * not show (git/review.ts). `before` runs once the cheap checks passed and
 * before anything is fetched (pr finds its remote there, so a missing
 * remote fails with the origin untouched). `checkedOut`: they will be
 * written into the origin's files (merge), so they are refused, `force` or
 * not, when that would write other bytes than hmm diff shows
 * (git/conversions.ts); a push writes no file of the user's.
 */
export async function takeForGit(
  context: Context,
  workspace: Workspace,
  options: {noCommits: string; force: boolean; checkedOut?: boolean; before?: (origin: string) => Promise<void>},
): Promise<TakenCommits & {origin: string}> {
  const {origin} = checkTakeable(workspace)
  if (workspace.row.originKind !== 'git') throw new HmmError(`workspace ${workspace.label} was not made from a git repository: hmm apply applies its changes`)
  if (!(await gitOriginOf(origin))) throw new HmmError(`${origin} is no longer the top of a git repository`)
  if (!workspaceCommits(workspace)) throw new HmmError(options.noCommits)
  await options.before?.(origin)
  const tip = await commitsOutOf(context, workspace)
  if (!tip) throw new HmmError(options.noCommits)
  for (const commit of await shownCommits(workspace, tip)) {
    say(`taking ${commit.line}${commit.kinds.length > 0 ? ` (more in hmm log: ${commit.kinds.join(', ')})` : ''}`)
  }
  // No --force takes these: git itself refuses them.
  const refused = await refusedPaths(workspace, tip)
  if (refused.length > 0) throw new HmmError(`workspace ${workspace.label}'s commits hold ${REFUSED}: ${listPaths(refused)}`)
  // What the merge would write, or the push publish, of the origin's files; no --force takes an excluded one.
  const writes = await mergeWrites(workspace, origin, tip)
  const excluded = excludedOf(workspace, writes.paths).sort()
  if (excluded.length > 0) {
    const again = `hmm ${options.checkedOut ? 'merge' : 'pr'} ${workspace.id}`
    throw new Refusal(
      `workspace ${workspace.label}'s commits change files that exclude in the config file keeps out of workspaces`,
      excluded.map(path => ({path, reason: 'excluded'})),
      `take them out of the commits (hmm exec ${workspace.id} git rm --cached -- PATH, then commit), then ${again} again`,
    )
  }
  const nowTree = await treeNow(workspace)
  checkShown(workspace, {tree: nowTree, tip})
  const unshown = options.force ? [] : await unshownChanges(workspace, tip, nowTree)
  if (unshown.length > 0) {
    const id = workspace.id
    const reasons: Record<UnshownWhy, string> = {
      after: 'changed after its last commit',
      putBack: 'put back after its last commit, so hmm diff shows no change',
      origin: `uncommitted in ${origin} when the workspace was made`,
      undone: 'changed by a commit and back by a later one',
    }
    // Changes the agent made after its last commit are its own: committed (or applied), they are what hmm diff shows.
    const commit = unshown.some(({why}) => why === 'after')
      ? `commit what changed after (hmm exec ${id} git commit -am ...) or take the files as they are (hmm apply ${id}); `
      : ''
    throw new Refusal(
      `workspace ${workspace.label}'s commits change what its files do not show`,
      unshown.map(({path, why}) => ({path, reason: reasons[why]})),
      `${commit}hmm log -p ${id} shows the commits; hmm ${options.checkedOut ? 'merge' : 'pr'} --force ${id} takes them anyway`,
    )
  }
  const {attributeFiles, converted, applyTakes} = options.checkedOut
    ? await checkoutConversions(workspace, origin, tip, nowTree)
    : {attributeFiles: [], converted: [], applyTakes: true}
  if (attributeFiles.length > 0) {
    const instead = applyTakes
      ? 'hmm apply takes their changes as hmm diff shows them'
      : "hmm apply refuses them too: take the files by hand from the workspace's tree, which hmm path shows"
    throw new HmmError(
      `workspace ${workspace.label}'s commits change how git writes files it checks out, which hmm diff does not show: ${listPaths(attributeFiles)} (${instead})`,
    )
  }
  if (converted.length > 0) throw new HmmError(`workspace ${workspace.label}'s commits change ${CONVERTED}: ${listPaths(converted)}`)
  if (options.checkedOut) await checkWrites(workspace, origin, tip, writes, options.force)
  return {...(await takeIntoOrigin(workspace, origin, tip, nowTree)), origin}
}

/**
 * What a merge would write into the origin's files: refused when it leaves
 * a symbolic link leading out of the tree or a directory git takes for a
 * repository (unless `force`), and always when
 * it would overwrite or remove a file git does not track there
 * (git/merge-writes.ts), which --force does not take: that file is the
 * user's alone, with no copy anywhere.
 */
async function checkWrites(workspace: Workspace, origin: string, tip: string, writes: MergeWrites, force: boolean): Promise<void> {
  if (!force) {
    await refuseMarked(workspace, writes.bases, tip, {
      holding: `workspace ${workspace.label}'s commits hold`,
      resolution: `look at them with hmm log -p ${workspace.id}; hmm merge --force ${workspace.id} takes them anyway`,
    })
  }
  const untracked = await untrackedInTheWay(workspace, origin, writes)
  if (untracked.length > 0) {
    const reasons = {
      untracked: `untracked in ${origin} and present there`,
      ignored: `ignored in ${origin} and present there`,
      nested: `a nested repository's directory in ${origin}, not empty: git would remove it whole`,
      unsure: `a name that is not UTF-8, like one in ${origin}: hmm cannot tell them apart`,
    }
    throw new Refusal(
      `workspace ${workspace.label}'s commits would overwrite or remove files that git does not track in ${origin}`,
      untracked.map(({path, kind}) => ({path, reason: reasons[kind]})),
      `move them out of ${origin}, then hmm merge ${workspace.id} again (hmm log -p ${workspace.id} shows what the commits put there)`,
    )
  }
}

/**
 * Refuses what hmm diff marks in `to` since `from` (trees or commits):
 * symbolic links leading out of the tree, then directories git takes for
 * repositories. `holding`: what the message says holds them.
 */
export async function refuseMarked(workspace: Workspace, from: string[], to: string, say: {holding: string; resolution: string}): Promise<void> {
  const links = await linksLeaving(workspace, from, to)
  if (links.length > 0) throw new Refusal(`${say.holding} symbolic links that lead out of the tree`, links.map(linkOutside), say.resolution)
  const repositories = await repositoriesMade(workspace, from, to)
  if (repositories.length > 0) {
    throw new Refusal(
      `${say.holding} directories git takes for repositories`,
      repositories.map(path => ({path, reason: REPOSITORY_MADE})),
      say.resolution,
    )
  }
}

/** A link out of the tree as a refusal names it. */
export function linkOutside(link: LinkOut): RefusedPath {
  return {path: link.path, reason: `link outside the tree (to ${printable(link.target)})`}
}

export function warnUncommitted(workspace: Workspace, taken: TakenCommits): void {
  if (taken.uncommitted) warn(`workspace ${workspace.label} has changes it did not commit, which are not merged`)
}
