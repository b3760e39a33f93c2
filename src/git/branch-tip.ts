// The commit the origin's checked-out branch is at: what of a workspace's
// commits it holds is taken back, whichever way it got there (hmm merge, a
// merge the user resolved, a pull of a merged pull request).
//
// Security: git runs in the origin, the user's own repository.
import {lstatSync} from 'node:fs'
import {git} from './git.js'

/** The origin's HEAD commit; undefined where it has none, is no repository or is gone. */
export async function branchTip(origin: string): Promise<string | undefined> {
  if (!lstatSync(origin, {throwIfNoEntry: false})?.isDirectory()) return undefined
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {cwd: origin, okStatuses: [1, 128]})
  return head.exitCode === 0 && head.stdout.trim() !== '' ? head.stdout.trim() : undefined
}
