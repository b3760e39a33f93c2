// The raw changes from one recorded tree (or commit) to another, which
// several steps of one hmm command ask for (the paths `exclude` names in
// what diff shows, the links leading out, WORK's count): git is asked once
// per pair. Objects named by their hashes never change, so neither does
// the answer; anything else (a ref) is asked each time.
//
// Everything here is hmm's private repository; no work tree is read.
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, git, nulPairs} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

const OBJECT = /^[0-9a-f]{40}([0-9a-f]{24})?$/

const asked = new Map<string, Promise<Array<[string, string]>>>()

/** `git diff-tree -r --no-renames --raw` from `from` to `to`: `[record, path]` for each path that differs. */
export function rawChangesBetween(workspace: Workspace, from: string, to: string): Promise<Array<[string, string]>> {
  const ask = async () => {
    const raw = await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--raw', from, to], {
      cwd: workspace.gitDir,
      env: privateEnv(privateRepo(workspace.gitDir)),
    })
    return nulPairs(raw.stdout)
  }
  if (!OBJECT.test(from) || !OBJECT.test(to)) return ask()
  const key = `${workspace.gitDir}\0${from}\0${to}`
  let answer = asked.get(key)
  if (!answer) {
    answer = ask()
    asked.set(key, answer)
    // Failed (killed, say): asked again next time.
    answer.catch(() => asked.delete(key))
  }
  return answer
}
