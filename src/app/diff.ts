// `hmm diff [--stat] [WS]`: what changed in the workspace since it was made,
// committed or not, as a git patch (or git's stat summary). Allowed while
// the command runs: it only reads the tree. It records what it showed, which
// is all apply, merge and pr take until a diff shows more.
//
// Symbolic links leading out of the tree are marked after the output
// (git/links-out.ts).
//
// Security: see git/changes.ts (the patch never comes from the workspace's
// `.git`) and git/pager.ts (colours and pager are the user's own settings).
import {Context} from '../workspaces/context.js'
import {recordWork} from '../workspaces/work.js'
import {filesTree, treeDiff, treeNow, type DiffRequest} from '../git/changes.js'
import {mayHoldBinary, withTextShown} from '../git/text-shown.js'
import {warn} from '../ui/errors.js'
import {listPaths, printable} from '../ui/format.js'
import {linksLeaving} from '../git/links-out.js'
import {repositoriesMade, REPOSITORY_MADE} from '../git/repositories-made.js'
import {askPagerSoon, colourSettings, onTerminal, show, showPatch} from '../git/pager.js'
import {checkOrigin, checkUsable, pathspecsOf, warnNestedNotShown} from './taking.js'
import {selected} from '../git/tree-edit.js'
import type {Workspace} from '../workspaces/workspace.js'

/**
 * What the user has seen of the workspace once a diff showed what lies
 * under `pathspecs` now: that, and elsewhere what the last diff showed (the
 * fork tree where none did), so that a change made elsewhere since is not
 * taken as shown.
 */
async function seenWith(workspace: Workspace, forkTree: string, pathspecs: string[]): Promise<string> {
  return selected(workspace, workspace.row.shownTree ?? forkTree, await treeNow(workspace), pathspecs)
}

/** `paths`: only what lies under them (SPEC "hmm apply" › Paths). */
export async function diffWorkspace(key: string | undefined, options: {stat: boolean; paths?: string[]}): Promise<void> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const forkTree = checkUsable(workspace)
    // Its objects, or its base clone, are what the workspace's work is compared with.
    checkOrigin(workspace)
    const pathspecs = pathspecsOf(workspace, context.cwd, options.paths)
    const origin = workspace.row.origin
    // The user's colours and pager are asked of their git while the files are read.
    const colouring = colourSettings(origin)
    colouring.catch(() => {})
    askPagerSoon(origin)
    // What is shown: the workspace's files, or the fork tree with what changed under the paths.
    let selection: Promise<string> | undefined
    const shown = async () =>
      pathspecs ? await (selection ??= treeNow(workspace).then(now => selected(workspace, forkTree, now, pathspecs))) : await treeNow(workspace)
    // From the tree of the files, which what it shows is recorded as anyway (below): the changed paths asked for to leave
    // out what `exclude` names are asked once, for the links and WORK's count too (git/raw-changes.ts). Meanwhile the
    // patch of the files as git wrote them is made: the one shown, unless the command wrote what `exclude` names.
    const written = pathspecs ? undefined : await filesTree(workspace)
    const colour = await colouring
    // git colours the stat (names are quoted by git); hmm colours the patch, whose content is the command's.
    const request: DiffRequest = {
      format: options.stat ? 'stat' : 'patch',
      colour: options.stat ? colour : undefined,
      columns: onTerminal() ? process.stdout.columns : undefined,
    }
    const ahead = written === undefined ? undefined : treeDiff(workspace, forkTree, written, request)
    ahead?.catch(() => {})
    const now = await shown()
    let bytes = ahead && now === written ? await ahead : await treeDiff(workspace, forkTree, now, request)
    let binary: string[] = []
    if (mayHoldBinary(bytes)) {
      const render = (attributes: string) => treeDiff(workspace, forkTree, now, {...request, attributes})
      ;({output: bytes, binary} = await withTextShown(workspace, [{from: forkTree, to: now}], bytes, render, forkTree))
    }
    if (bytes.length > 0) await (options.stat ? show(bytes, origin) : showPatch(bytes, origin, colour))
    // Said after the patch, where it is seen: what a binary patch holds was not shown.
    if (!options.stat && binary.length > 0) {
      warn(`workspace ${workspace.label} changes binary files, whose content hmm diff does not show: ${listPaths(binary)}`)
    }
    // Marked on stderr, one line each: the patch stays one git applies.
    for (const link of await linksLeaving(workspace, [forkTree], await shown())) {
      warn(`${printable(link.path)} -> ${printable(link.target)} (outside the tree)`)
    }
    for (const dir of await repositoriesMade(workspace, [forkTree], await shown())) warn(`${printable(dir)}: ${REPOSITORY_MADE}`)
    await warnNestedNotShown(workspace)
    // What apply, merge and pr may take (app/taking.ts checkShown): the tree of the index the patch was read from.
    // Recorded whether or not hmm sees a process there: without the namespaces one may live unseen. A stat shows no content.
    // The stat is kept apart, so that apply can say why it did not count.
    if (options.stat) context.store.update(workspace.id, {statTree: await treeNow(workspace)})
    else context.store.update(workspace.id, {shownTree: pathspecs ? await seenWith(workspace, forkTree, pathspecs) : await treeNow(workspace)})
    await recordWork(context.store, workspace, context.data)
  } finally {
    context.close()
  }
}
