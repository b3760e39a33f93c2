// `hmm apply [--check] [WS]`: the changes `hmm diff` shows, made in the
// origin's files — all or nothing, nothing staged or committed, binary files
// byte for byte, for git and non-git origins alike.
//
// Security: `git apply` runs with hmm's private repository as its git
// directory and the origin as its work tree, so patch paths are relative to
// the origin (also when it is a subdirectory of a repository), no index is
// touched, and neither the workspace's nor the origin's configuration can
// change what is written (whitespace fixing is off: the bytes are applied as
// they are). git apply itself refuses paths that leave the work tree or go
// through a symbolic link. Everything is checked before anything is written.
import {join} from 'node:path'
import {say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {recordWork, stateWith} from '../workspaces/work.js'
import {treeDiff, treeNow} from '../git/changes.js'
import {git, gitMessages} from '../git/git.js'
import {privateEnv, privateRepo} from '../git/private-repo.js'
import {checkTakeable} from './taking.js'
import type {Workspace} from '../workspaces/workspace.js'

function applyEnv(workspace: Workspace, origin: string): Record<string, string> {
  return {
    ...privateEnv(privateRepo(workspace.gitDir)),
    GIT_WORK_TREE: origin,
    // Never read or written without --index/--cached; pointed at nothing to be sure.
    GIT_INDEX_FILE: join(workspace.gitDir, 'index.apply-unused'),
  }
}

const APPLY = ['apply', '--binary', '--whitespace=nowarn']

/** git's reasons, one per line. */
function reasons(stderr: string): string[] {
  const lines = gitMessages(stderr)
  return lines.length > 0 ? lines : ['git apply failed']
}

/** Returns the exit status. */
export async function applyWorkspace(key: string | undefined, options: {check: boolean}): Promise<number> {
  const context = new Context()
  try {
    const workspace = context.workspace(key)
    const {forkTree, origin} = checkTakeable(workspace)
    const now = await treeNow(workspace)
    if (now === forkTree) {
      say(`workspace ${workspace.label} changed nothing`)
      return 0
    }
    const patch = await treeDiff(workspace, forkTree, now, {format: 'patch'})
    const env = applyEnv(workspace, origin)
    const record = () => {
      const state = stateWith(workspace, now)
      if (!options.check && state) context.store.update(workspace.id, {takenState: state, takenBy: 'applied'})
    }

    const forward = await git([...APPLY, '--check', '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
    if (forward.exitCode === 0) {
      if (options.check) {
        say(`workspace ${workspace.label} applies to ${origin}`)
        return 0
      }
      const applied = await git([...APPLY, '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
      if (applied.exitCode !== 0) {
        say(`workspace ${workspace.label} does not apply to ${origin}`)
        for (const reason of reasons(applied.stderr)) say(reason)
        return 1
      }
      record()
      await recordWork(context.store, workspace, context.data)
      say(`applied workspace ${workspace.label} to ${origin}`)
      return 0
    }
    const reverse = await git([...APPLY, '--check', '--reverse', '-'], {cwd: origin, env, input: patch, okStatuses: [1, 128]})
    if (reverse.exitCode === 0) {
      record()
      if (!options.check) await recordWork(context.store, workspace, context.data)
      say(`workspace ${workspace.label} is already applied to ${origin}`)
      return 0
    }
    say(`workspace ${workspace.label} does not apply to ${origin}`)
    for (const reason of reasons(forward.stderr)) say(reason)
    return 1
  } finally {
    context.close()
  }
}
