// A workspace of a linked worktree (`git worktree add`) gets a repository of
// its own (SPEC `hmm run`). The clone of a worktree holds only a `.git` file
// naming the worktree's directory in the origin repository, which the
// sandbox may read but not write: the command could not even take the
// index's lock. So the clone's `.git` becomes a directory, made here before
// the command starts, that shares the origin's objects read-only through
// objects/info/alternates (new objects land in the workspace) and has the
// worktree's HEAD, index and excludes and the repository's config and refs
// as its own. The commits come out as any workspace's do (bundle.ts), into
// the worktree's branch.
//
// Security: git never runs on the repository made here; its files are
// written from what git says about the origin's repository (the user's).
import {copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {git} from './git.js'
import type {GitOrigin} from './origin.js'

/** Whether the origin is a linked worktree: its git directory is not the repository's common one. */
export function isLinkedWorktree(repo: GitOrigin): boolean {
  return repo.gitDir !== repo.commonDir
}

/** The refs shared by every worktree, as a packed-refs file (other workspaces' refs/hmm/* left out). */
async function sharedRefs(origin: string): Promise<string> {
  const listed = await git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags', 'refs/remotes', 'refs/notes'], {cwd: origin})
  return listed.stdout
}

async function headOf(origin: string): Promise<string> {
  const branch = await git(['symbolic-ref', '--quiet', 'HEAD'], {cwd: origin, okStatuses: [1]})
  if (branch.exitCode === 0) return `ref: ${branch.stdout.trim()}\n`
  return (await git(['rev-parse', 'HEAD'], {cwd: origin})).stdout
}

function copyIfThere(from: string, to: string): void {
  if (existsSync(from)) copyFileSync(from, to)
}

/** Replaces the `.git` file of the fresh clone `tree` of the worktree `origin` with a repository of its own. */
export async function giveOwnRepository(origin: string, repo: GitOrigin, tree: string): Promise<void> {
  const [refs, head] = await Promise.all([sharedRefs(origin), headOf(origin)])
  const dotGit = join(tree, '.git')
  unlinkSync(dotGit)
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) mkdirSync(join(dotGit, dir), {recursive: true})
  writeFileSync(join(dotGit, 'objects', 'info', 'alternates'), `${repo.objects}\n`)
  writeFileSync(join(dotGit, 'HEAD'), head)
  writeFileSync(join(dotGit, 'packed-refs'), refs)
  // The repository's config, the worktree's own on top (extensions.worktreeConfig), and never bare: a
  // repository of worktrees may be.
  const config = [join(repo.commonDir, 'config'), join(repo.gitDir, 'config.worktree')].filter(existsSync).map(file => readFileSync(file, 'utf8'))
  writeFileSync(join(dotGit, 'config'), `${config.join('\n')}\n[core]\n\tbare = false\n`)
  // The index, as the worktree's (a split index's shared part beside it), so status starts as the origin's.
  copyIfThere(repo.index, join(dotGit, 'index'))
  for (const name of readdirSync(repo.gitDir).filter(name => name.startsWith('sharedindex.'))) copyFileSync(join(repo.gitDir, name), join(dotGit, name))
  copyIfThere(join(repo.commonDir, 'info', 'exclude'), join(dotGit, 'info', 'exclude'))
  copyIfThere(join(repo.commonDir, 'shallow'), join(dotGit, 'shallow'))
}
