// `hmm log [-p] [WS]`: the commits merge and pr would take, newest first,
// taken out of the workspace exactly as they take them (the bundle made in
// the sandbox, fetched into hmm's private repository; the origin is not
// touched). Allowed while the command runs: it only reads. With -p it
// records the last commit it showed, the only one merge and pr then take
// (app/taking.ts checkShown).
//
// Each commit is shown with all that a push publishes of it beyond its
// tree (app/commits.ts): its body, an author or committer other than the
// user, headers git's formats never show; `hmm pr` would publish them. A
// command without a network could otherwise hide what it read in a body or
// an author, for `hmm pr` to publish.
//
// Security: the commits' text is the command's, made printable
// (ui/format.ts); the patches are bytes no configuration changes, as with
// hmm diff (git/review.ts), and what a NUL byte alone makes binary to git
// is shown as text, commit by commit, as hmm diff shows it (git/text-shown.ts).
import {colourSettings, show, showPatch} from '../git/pager.js'
import {commitChanges, commitPatches, PATCH_COMMIT} from '../git/review.js'
import {mayHoldBinary, withTextShown} from '../git/text-shown.js'
import {warn} from '../ui/errors.js'
import {listPaths} from '../ui/format.js'
import {Context} from '../workspaces/context.js'
import {commitsOutOf, shownCommits, type ShownCommit} from './commits.js'
import {checkOrigin, checkUsable} from './taking.js'

/** A commit's lines as hmm log prints them. */
const commitText = (commit: ShownCommit) => [commit.line, ...commit.more].map(line => `${line}\n`).join('')

/** The patches with each commit's line (git/review.ts's PATCH_COMMIT) replaced by the commit as hmm shows it. */
function withCommitsShown(patches: Buffer, commits: ShownCommit[]): Buffer {
  const byId = new Map(commits.map(commit => [commit.id, commit]))
  const parts: Buffer[] = []
  let from = 0
  while (from < patches.length) {
    const newline = patches.indexOf(10, from)
    const end = newline < 0 ? patches.length : newline + 1
    const id = patches[from] === 0 ? PATCH_COMMIT.exec(patches.subarray(from, newline < 0 ? end : newline).toString('latin1'))?.[1] : undefined
    const commit = id === undefined ? undefined : byId.get(id)
    parts.push(commit ? Buffer.from(commitText(commit)) : patches.subarray(from, end))
    from = end
  }
  return Buffer.concat(parts)
}

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
    const commits = await shownCommits(workspace, tip)
    if (options.patch) {
      let patches = await commitPatches(workspace, tip)
      let binary: string[] = []
      if (mayHoldBinary(patches)) {
        const render = (attributes: string) => commitPatches(workspace, tip, attributes)
        ;({output: patches, binary} = await withTextShown(workspace, await commitChanges(workspace, tip), patches, render))
      }
      await showPatch(withCommitsShown(patches, commits), origin, await colourSettings(origin))
      // Said after the patches, where it is seen, as hmm diff says it.
      if (binary.length > 0) warn(`workspace ${workspace.label}'s commits change binary files, whose content hmm log -p does not show: ${listPaths(binary)}`)
      context.store.update(workspace.id, {shownTip: tip})
    } else await show(Buffer.from(commits.map(commitText).join('')), origin)
  } finally {
    context.close()
  }
}
