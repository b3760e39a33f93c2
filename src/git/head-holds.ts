// Whether the origin's HEAD holds a commit: asked by listing, once, when a
// merge that stopped at conflicts has ended (workspaces/merging.ts). Run
// synchronously with node's own child_process, loaded only then
// (native/helper.ts says why), so listing stays free of execa and of the
// rest of git.ts's runner.
//
// Security: git runs in the origin, the user's own repository (an origin is
// never inside hmm's data directory: run refuses one), never in a
// workspace's; with git.ts's scrubbed environment and protective settings,
// and the git that `hmm merge` resolved and checked (platform/programs.ts).
import {childProcess} from '../native/helper.js'
import {scrubbedEnv} from './git.js'

/** true or false; undefined when it cannot be told now (the origin is no repository, git failed). */
export function headHolds(origin: string, commit: string, git: string): boolean | undefined {
  const result = childProcess().spawnSync(git, ['merge-base', '--is-ancestor', commit, 'HEAD'], {cwd: origin, env: scrubbedEnv(), stdio: 'ignore'})
  if (result.status === 0) return true
  return result.status === 1 ? false : undefined
}
