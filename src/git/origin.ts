// What the origin was when a workspace was made, recorded so later diffs,
// applies and merges compare against it (DESIGN "Data flow of hmm run" 3).
//
// Git top-level: the HEAD commit, and the tree of the working files
// (uncommitted and untracked included, ignored excluded), written with a
// temporary copy of the origin's index into hmm's private object directory:
// the origin's index, refs, stash and objects are left byte-for-byte as they
// were. Anything else (no repository, a subdirectory of one, a bare one) is
// recorded after cloning as the tree of the fresh clone.
import {copyFileSync, existsSync, readFileSync} from 'node:fs'
import {isAbsolute, join, resolve} from 'node:path'
import {git, gitLine} from './git.js'
import {createPrivateRepo, privateRepo, writeTreeOf, type PrivateRepo} from './private-repo.js'

export interface GitOrigin {
  /** The origin's git directory and object directory (absolute). */
  gitDir: string
  objects: string
  index: string
}

/** The origin's repository if the origin is the top of a (non-bare) git repository. */
export async function gitOriginOf(origin: string): Promise<GitOrigin | undefined> {
  const probe = await git(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'objects', '--git-path', 'index'], {
    cwd: origin,
    okStatuses: [128],
  })
  if (probe.exitCode !== 0) return undefined
  const [top, gitDir, objects, index] = probe.stdout.split('\n')
  if (!top || resolve(top) !== origin) return undefined
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(origin, path))
  return {gitDir, objects: absolute(objects), index: absolute(index)}
}

export interface OriginRecord {
  headCommit: string | null
  headBranch: string | null
  forkTree: string
}

/** Records a git origin before it is cloned. */
export async function recordGitOrigin(origin: string, repoOfOrigin: GitOrigin, gitDir: string): Promise<{record: OriginRecord; repo: PrivateRepo}> {
  const excludes = join(repoOfOrigin.gitDir, 'info', 'exclude')
  const repo = await createPrivateRepo(gitDir, repoOfOrigin.objects, existsSync(excludes) ? [readFileSync(excludes, 'utf8')] : [])
  const forkIndex = join(gitDir, 'index.fork')
  // Starting from the origin's own index: its stat data matches the origin's
  // files, so git re-reads only what changed since the user's last `git add`.
  if (existsSync(repoOfOrigin.index)) copyFileSync(repoOfOrigin.index, forkIndex)
  const env = {GIT_INDEX_FILE: forkIndex, GIT_OBJECT_DIRECTORY: join(gitDir, 'objects'), GIT_ALTERNATE_OBJECT_DIRECTORIES: repoOfOrigin.objects}
  await git(['add', '--all', '--', '.'], {cwd: origin, env})
  const forkTree = await gitLine(['write-tree'], {cwd: origin, env})
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {cwd: origin, okStatuses: [1]})
  const branch = await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], {cwd: origin, okStatuses: [1]})
  return {
    record: {
      headCommit: head.stdout.trim() || null,
      headBranch: branch.stdout.trim() || null,
      forkTree,
    },
    repo,
  }
}

/** Records a non-git origin from its fresh clone (nobody has touched it yet). */
export async function recordPlainOrigin(gitDir: string, tree: string): Promise<OriginRecord> {
  const repo = await createPrivateRepo(gitDir)
  return {headCommit: null, headBranch: null, forkTree: await writeTreeOf(repo, tree)}
}

/** After cloning a git origin: the workspace's index starts as the fork's. */
export function startWorkspaceIndex(gitDir: string): void {
  const forkIndex = join(gitDir, 'index.fork')
  if (existsSync(forkIndex)) copyFileSync(forkIndex, privateRepo(gitDir).index)
}
