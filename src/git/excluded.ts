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
import {existsSync, readFileSync} from 'node:fs'
import {excludedAmong} from '../native/helper.js'
import type {Workspace} from '../workspaces/workspace.js'
import {git, type GitOptions} from './git.js'
import {parseIndex, type ObjectFormat} from './index-file.js'
import {changedPaths, treeWith} from './tree-edit.js'

const nulSeparated = (text: string) => text.split('\0').filter(Boolean)
const nulTerminated = (paths: string[]) => paths.map(path => `${path}\0`).join('')

/** The workspace's patterns file, or undefined when it excludes nothing (or was made before `exclude`). */
export function patternsOf(workspace: Workspace): string | undefined {
  const file = workspace.excludeFile
  return existsSync(file) && readFileSync(file, 'utf8').trim() !== '' ? file : undefined
}

/**
 * Removes from the index git runs on (`on`, its GIT_INDEX_FILE `index`,
 * read here where its version allows) the entries the patterns exclude.
 */
export async function dropExcluded(on: GitOptions & {cwd: string}, patterns: string, index: {file: string; format: ObjectFormat}): Promise<void> {
  const read = existsSync(index.file) ? parseIndex(readFileSync(index.file), index.format)?.paths() : undefined
  const paths = read ?? nulSeparated((await git(['ls-files', '-z'], on)).stdout)
  const out = excludedAmong(patterns, paths)
  if (out.length > 0) await git(['update-index', '-z', '--force-remove', '--stdin'], {...on, input: nulTerminated(out)})
}

/** Those of the paths that the workspace's patterns exclude. */
export function excludedOf(workspace: Workspace, paths: Iterable<string>): string[] {
  const patterns = patternsOf(workspace)
  return patterns ? excludedAmong(patterns, [...paths]) : []
}

/**
 * The tree `tree` of the workspace's files with each excluded path the
 * command changed as the recorded tree `recorded` holds it (absent, as a
 * rule): what hmm shows, applies and counts of the workspace.
 */
export async function keptAsRecorded(workspace: Workspace, recorded: string, tree: string): Promise<string> {
  if (!patternsOf(workspace)) return tree
  return treeWith(workspace, tree, recorded, excludedOf(workspace, await changedPaths(workspace, recorded, tree)))
}
