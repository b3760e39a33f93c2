// `hmm pr [--draft] [WS]`: the workspace's commits (taken as merge takes
// them) pushed to `hmm/<name>` (or `hmm/<id>`) of the remote the origin's
// branch tracks, and a GitHub pull request opened for them with `gh` (or
// the existing one found); without gh, the compare URL; for a remote not on
// GitHub, only the push. The origin's branch and files are not touched.
//
// Security: commits come out through git/bundle.ts; their messages are read
// from the origin's repository after every object was checked (trusted git,
// untrusted text) and reach gh only as argv values (git/github.ts).
import {HmmError, say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {recordWork} from '../workspaces/work.js'
import {hmmRef} from '../git/bundle.js'
import {git, nulPairs} from '../git/git.js'
import {compareUrl, ensurePullRequest, githubRepo, hasGh} from '../git/github.js'
import {takeForGit, warnUncommitted} from './commits.js'
import {warnNested} from './taking.js'
import {checkBranchName, pushTarget, pushWithLease, type PushTarget} from '../git/push.js'
import type {Workspace} from '../workspaces/workspace.js'

export interface PullRequestText {
  title: string
  body: string
}

/** Title: the first commit's subject; body: its message body, or `- <subject>` per commit for several. */
export function pullRequestText(commits: Array<{subject: string; body: string}>): PullRequestText {
  if (commits.length === 0) return {title: '', body: ''}
  if (commits.length === 1) return {title: commits[0].subject, body: commits[0].body.trim()}
  return {title: commits[0].subject, body: commits.map(commit => `- ${commit.subject}`).join('\n')}
}

/** The commits hmm took, oldest first, read from the origin's repository. */
async function commitsTaken(workspace: Workspace, origin: string): Promise<Array<{subject: string; body: string}>> {
  const range = [hmmRef(workspace), ...(workspace.row.headCommit ? [`^${workspace.row.headCommit}`] : [])]
  const log = await git(['log', '-z', '--reverse', '--no-show-signature', '--format=%s%x00%b', ...range, '--'], {cwd: origin})
  return nulPairs(log.stdout).map(([subject, body]) => ({subject: subject.replace(/^\n/, ''), body}))
}

/** Returns the exit status. */
export async function prWorkspace(key: string | undefined, options: {draft: boolean; force: boolean}): Promise<number> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const remoteBranch = `hmm/${workspace.row.name ?? workspace.id}`
    let target: PushTarget | undefined
    const taken = await takeForGit(context, workspace, {
      noCommits: `workspace ${workspace.label} has no commits to push`,
      force: options.force,
      before: async origin => {
        target = await pushTarget(origin, workspace.row.headBranch)
        await checkBranchName(origin, remoteBranch)
      },
    })
    if (!target) throw new HmmError('no push target') // set by takeForGit's callback
    const origin = taken.origin
    // The lease holds the remote branch to the commit last pushed: when that is the tip, the push changes nothing.
    const nothingNew = workspace.row.pushedCommit === taken.tip
    await pushWithLease(origin, target, {label: workspace.label, ref: hmmRef(workspace), remoteBranch, lease: workspace.row.pushedCommit})
    context.store.update(workspace.id, {pushedCommit: taken.tip})
    await recordWork(context.store, workspace, context.data)

    const repo = githubRepo(target.url)
    const pushed = nothingNew ? `nothing new in workspace ${workspace.label} since it was pushed to` : `pushed workspace ${workspace.label} to`
    say(`${pushed} ${target.remote} ${remoteBranch}${repo ? '' : ' (not on GitHub)'}`)
    warnUncommitted(workspace, taken)
    await warnNested(workspace)
    if (!repo) return 0
    let url: string
    if (hasGh()) {
      const text = pullRequestText(await commitsTaken(workspace, origin))
      url = await ensurePullRequest({repo, base: target.base, head: remoteBranch, ...text, draft: options.draft}, origin)
    } else {
      say('no pull request was opened (gh is not installed); open one at:')
      url = compareUrl(repo, target.base, remoteBranch)
    }
    process.stdout.write(`${url}\n`)
    return 0
  } finally {
    context.close()
  }
}
