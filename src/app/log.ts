// `hmm log [-p] [WS]`: the commits merge and pr would take, newest first,
// taken out of the workspace exactly as they take them (the bundle made in
// the sandbox, fetched into hmm's private repository; the origin is not
// touched). Allowed while the command runs: it only reads.
//
// Security: the listing's subjects are the command's text, made printable
// (ui/format.ts); the patches are bytes no configuration changes, as with
// hmm diff (git/review.ts).
import {colourSettings, show, showPatch} from '../git/pager.js'
import {commitPatches} from '../git/review.js'
import {Context} from '../workspaces/context.js'
import {commitsOutOf, namedCommits} from './commits.js'
import {checkOrigin, checkUsable} from './taking.js'

export async function logWorkspace(key: string | undefined, options: {patch: boolean}): Promise<void> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    checkUsable(workspace)
    const origin = checkOrigin(workspace)
    // Commits come only from a workspace of a git repository's top (merge says so for the rest).
    if (workspace.row.originKind !== 'git') return
    const tip = await commitsOutOf(context, workspace)
    if (!tip) return
    if (options.patch) await showPatch(await commitPatches(workspace, tip), origin, await colourSettings(origin))
    else await show(Buffer.from((await namedCommits(workspace, tip)).map(line => `${line}\n`).join('')), origin)
  } finally {
    context.close()
  }
}
