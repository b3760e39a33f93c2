// What a workspace holds beyond what it was made from, counted for WORK
// (`hmm ls`, the last line of run and exec): its commits since it was made
// and the files it changed without committing them.
//
// Security: as git/bundle.ts — the commits come out through a bundle made
// inside the sandbox, into hmm's private repository only (counting needs no
// more); the files are compared as trees written by hmm (changes.ts).
import type {Workspace} from '../workspaces/workspace.js'
import {commitRange, filesChanged, INCOMING_REF, ownUncommitted, rawChanges, takeIntoPrivate} from './bundle.js'
import {gitLine} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

export interface WorkCount {
  commits: number
  files: number
}

/** How many files differ between two trees recorded in the private repository (a rename is one). */
export async function changedFiles(workspace: Workspace, from: string, to: string): Promise<number> {
  return filesChanged(workspace, from, to, [...(await rawChanges(workspace, from, to))])
}

/**
 * Counts the workspace's work since it was made, its HEAD (`head`) and
 * files (`nowTree`, written by treeNow) as they are now.
 */
export async function countWork(workspace: Workspace, data: string, head: string | null, nowTree: string): Promise<WorkCount> {
  const forkTree = workspace.row.forkTree!
  if (workspace.row.originKind === 'plain' || head === workspace.row.headCommit || head === null) {
    return {commits: 0, files: await changedFiles(workspace, forkTree, nowTree)}
  }
  // No commit in the bundle: HEAD moved back to what the origin had.
  const tip = await takeIntoPrivate(workspace, data, {head})
  if (!tip) return {commits: 0, files: await changedFiles(workspace, forkTree, nowTree)}
  const env = privateEnv(privateRepo(workspace.gitDir))
  const commits = Number(await gitLine(['rev-list', '--count', ...commitRange(workspace, INCOMING_REF)], {cwd: workspace.gitDir, env}))
  const tipTree = await gitLine(['rev-parse', '--verify', `${INCOMING_REF}^{tree}`], {cwd: workspace.gitDir, env})
  return {commits, files: await ownUncommitted(workspace, tipTree, nowTree)}
}
