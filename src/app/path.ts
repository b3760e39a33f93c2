// `hmm path [WS]`: the workspace's tree on stdout.
//
// Security: the tree's repository is the command's (its .git/config can name
// an fsmonitor, a pager, hooks). git run there outside hmm, by the user, a
// shell prompt showing the branch or an editor, runs what it says,
// unconfined; so on a terminal hmm says so, where the user reads it.
import {isTerminal} from '../ui/terminal.js'
import {HmmError, say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {status} from '../workspaces/status.js'

export function workspacePath(key: string | undefined): string {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    if (status(workspace) === 'broken') throw new HmmError(`workspace ${workspace.label} is broken (hmm rm removes it)`)
    if (isTerminal(2)) {
      say(
        "git run in that directory outside hmm (by you, a shell prompt or an editor) runs what the workspace's .git/config says, " +
          `unconfined: work there with hmm exec ${workspace.row.name ?? workspace.id}, look with hmm diff and hmm log`,
      )
    }
    return `${workspace.tree}\n`
  } finally {
    context.close()
  }
}
