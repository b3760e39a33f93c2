// `hmm path [WS]`: the workspace's tree on stdout, for `cd "$(hmm path parser)"`.
import {HmmError} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {status} from '../workspaces/status.js'

export function workspacePath(key: string | undefined): string {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    if (status(workspace) === 'broken') throw new HmmError(`workspace ${workspace.label} is broken (hmm rm removes it)`)
    return `${workspace.tree}\n`
  } finally {
    context.close()
  }
}
