// Pushing a workspace's commits (already in the origin as refs/hmm/<id>) to
// a branch of the origin's remote, with the user's own credentials.
//
// The remote branch is overwritten only if it is as hmm last pushed it (a
// lease on the recorded commit; absent before the first push), so a branch
// someone else moved is never lost. Runs in the origin, the user's own
// repository (their pre-push hook, their credential helpers).
import {HmmError} from '../ui/errors.js'
import {ALLOW_LOCAL_TRANSPORT, branchOf, git, gitMessages, gitReason} from './git.js'

export interface PushTarget {
  /** The origin's branch the work is based on. */
  branch: string
  /** The remote that branch tracks, or `origin`. */
  remote: string
  url: string
  /** The branch it tracks on the remote (or the branch of the same name). */
  base: string
}

async function config(origin: string, key: string): Promise<string | undefined> {
  const result = await git(['config', '--get', key], {cwd: origin, okStatuses: [1]})
  return result.exitCode === 0 ? result.stdout.replace(/\n$/, '') : undefined
}

/** The origin's branch (as recorded when the workspace was made, else now), its remote and base. */
export async function pushTarget(origin: string, recordedBranch: string | null): Promise<PushTarget> {
  let branch = recordedBranch
  if (!branch) {
    // Its name under refs/heads, not --short's (heads/main where a tag is named main too).
    const now = await git(['symbolic-ref', '--quiet', 'HEAD'], {cwd: origin, okStatuses: [1, 128]})
    branch = now.exitCode === 0 ? branchOf(now.stdout.trim()) : null
  }
  if (!branch) throw new HmmError(`${origin} is not on a branch`)
  const remote = (await config(origin, `branch.${branch}.remote`)) || 'origin'
  // The configured URL, not the rewritten one (url.<x>.insteadOf): that names the repository on GitHub.
  const url = remote === '.' ? undefined : await config(origin, `remote.${remote}.url`)
  if (!url) throw new HmmError(`${origin} has no remote ${remote}`)
  const merge = await config(origin, `branch.${branch}.merge`)
  const base = merge?.replace(/^refs\/heads\//, '') || branch
  return {branch, remote, url, base}
}

/** A workspace named by an older hmm may hold what git refuses in a branch (`a..b`, `x.lock`): checked before anything is pushed. */
export async function checkBranchName(origin: string, branch: string): Promise<void> {
  const valid = await git(['check-ref-format', `refs/heads/${branch}`], {cwd: origin, okStatuses: [1]})
  if (valid.exitCode !== 0) throw new HmmError(`${branch} is not a valid branch name, so hmm pr cannot push to it`)
}

/** Pushes `ref` to `refs/heads/<remoteBranch>` unless the remote branch moved since `lease` (null: must not exist). */
export async function pushWithLease(
  origin: string,
  target: PushTarget,
  push: {label: string; ref: string; remoteBranch: string; lease: string | null},
): Promise<void> {
  const {ref, remoteBranch, lease} = push
  const remoteRef = `refs/heads/${remoteBranch}`
  const pushed = await git(
    // The user's own remote, wherever it is (a path too).
    [
      ...ALLOW_LOCAL_TRANSPORT,
      'push',
      '--quiet',
      '--no-recurse-submodules',
      `--force-with-lease=${remoteRef}:${lease ?? ''}`,
      target.remote,
      `${ref}:${remoteRef}`,
    ],
    {cwd: origin, okStatuses: [1, 128]},
  )
  if (pushed.exitCode !== 0) {
    const lines = gitMessages(pushed.stderr)
    const reason = lines.find(line => /\[(remote )?rejected\]/.test(line))?.replace(/\s+/g, ' ') ?? gitReason(pushed.stderr, `exit status ${pushed.exitCode}`)
    throw new HmmError(`could not push workspace ${push.label} to ${target.remote} ${remoteBranch}: ${reason}`)
  }
}
