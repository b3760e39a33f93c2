// `hmm prune [-a]`: removes the working directory's workspaces (-a: all)
// that `hmm rm` would remove without -f and that are not running — by rm's
// own check (rm.ts), naming each. What is kept is kept silently.
import {reportError} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {Workspace} from '../workspaces/workspace.js'
import {Kept, removeChecked} from './rm.js'

/** Returns whether every workspace was either removed or kept on purpose. */
export async function pruneWorkspaces(options: {all: boolean}): Promise<boolean> {
  const context = new Context()
  let failed = false
  try {
    for (const row of context.store.list(options.all ? undefined : context.origin)) {
      try {
        await removeChecked(context, new Workspace(row, context.data), false)
      } catch (error) {
        if (error instanceof Kept) continue
        reportError(error)
        failed = true
      }
    }
  } finally {
    context.close()
  }
  return !failed
}
