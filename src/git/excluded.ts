// Project secrets (SPEC "Sandbox" › Reading): the config file's `exclude`
// names files of the origin that are never cloned into a workspace
// (native-helpers/exclude.c matches them, for the clone and here). The
// patterns a workspace was made with are kept in its directory
// (Workspace.excludeFile), out of the command's reach.
//
// - The tree recorded of the origin leaves them out too, or hmm diff would
//   show a committed one as deleted (dropExcluded).
// - What the command writes at such a path is its own, and never shown,
//   applied or merged: the tree of its files keeps there what the origin's
//   recorded tree holds (keptAsRecorded), so a `.env` it writes, even one
//   its own .gitignore un-ignores, is neither shown nor written over the
//   user's; commits that change one are refused by merge and pr.
//
// Git here reads hmm's private repository or the origin (trusted) only.
import {existsSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {excludedAmong} from '../native/helper.js'
import type {Workspace} from '../workspaces/workspace.js'
import {git, gitLine, type GitOptions} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

const nulSeparated = (text: string) => text.split('\0').filter(Boolean)
const nulTerminated = (paths: string[]) => paths.map(path => `${path}\0`).join('')

/** The workspace's patterns file, or undefined when it excludes nothing (or was made before `exclude`). */
export function patternsOf(workspace: Workspace): string | undefined {
  const file = workspace.excludeFile
  return existsSync(file) && readFileSync(file, 'utf8').trim() !== '' ? file : undefined
}

/** Removes from the index git runs on (`on`) the entries the patterns exclude. */
export async function dropExcluded(on: GitOptions & {cwd: string}, patterns: string): Promise<void> {
  const out = excludedAmong(patterns, nulSeparated((await git(['ls-files', '-z'], on)).stdout))
  if (out.length > 0) await git(['update-index', '-z', '--force-remove', '--stdin'], {...on, input: nulTerminated(out)})
}

/** Those of the paths that the workspace's patterns exclude. */
export function excludedOf(workspace: Workspace, paths: Iterable<string>): string[] {
  const patterns = patternsOf(workspace)
  return patterns ? excludedAmong(patterns, [...paths]) : []
}

/** The paths changed between two trees (or a tree and the private index: `to` undefined). */
export async function changedPaths(workspace: Workspace, from: string, to: string | undefined, env?: Record<string, string>): Promise<string[]> {
  const on = {cwd: workspace.gitDir, env: env ?? privateEnv(privateRepo(workspace.gitDir))}
  const args = to === undefined ? ['diff-index', '--cached', from] : ['diff-tree', '-r', from, to]
  return nulSeparated((await git([...args, '-z', '--no-renames', '--name-only'], on)).stdout)
}

/**
 * The tree `tree` of the workspace's files with each excluded path the
 * command changed as the recorded tree `recorded` holds it (absent, as a
 * rule): what hmm shows, applies and counts of the workspace.
 */
export async function keptAsRecorded(workspace: Workspace, recorded: string, tree: string): Promise<string> {
  if (!patternsOf(workspace)) return tree
  const out = excludedOf(workspace, await changedPaths(workspace, recorded, tree))
  if (out.length === 0) return tree
  const env = {...privateEnv(privateRepo(workspace.gitDir)), GIT_INDEX_FILE: join(workspace.gitDir, `index.excluded-${process.pid}`)}
  const on = {cwd: workspace.gitDir, env}
  try {
    const listed = await git(['ls-tree', '-z', '--full-tree', recorded, '--', ...out], {...on, env: {...env, GIT_LITERAL_PATHSPECS: '1'}})
    // `<mode> <type> <object>\t<path>`; a mode of 0 removes the path.
    const kept = nulSeparated(listed.stdout).filter(entry => !entry.startsWith('040000 '))
    const keptPaths = new Set(kept.map(entry => entry.slice(entry.indexOf('\t') + 1)))
    const zero = '0'.repeat(recorded.length)
    const removed = out.filter(path => !keptPaths.has(path)).map(path => `0 ${zero}\t${path}`)
    await git(['read-tree', tree], on)
    await git(['update-index', '-z', '--index-info'], {...on, input: nulTerminated([...removed, ...kept])})
    return await gitLine(['write-tree', '--missing-ok'], on)
  } finally {
    rmSync(env.GIT_INDEX_FILE, {force: true})
  }
}
