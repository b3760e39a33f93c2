// Nested repositories in a workspace (at any depth, submodules, ones behind
// a `.git` file): the command's, config and all. Git records one as a
// gitlink, the commit its HEAD names, read as files. But `git add` over an
// index that already holds the gitlink asks whether the nested repository
// is dirty by running `git status` inside it, under its own config:
// fsmonitor, filters, core.worktree ran outside the sandbox (issue 11). So
// the private index holds no gitlink while git reads the tree: they are
// taken out first, git records each nested repository again as a new one
// (from its HEAD, never entering it), and a gitlink git did not record
// again where its directory is still there (a submodule not checked out:
// an empty directory) is put back as it was, as git itself keeps it.
import {lstatSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {git, type GitOptions} from './git.js'
import {parseIndex, type ObjectFormat} from './index-file.js'
import {objectFormatOf} from './index-trust.js'
import {readRegularFile, readWorkspaceHead} from './workspace-head.js'

export interface Gitlink {
  path: string
  id: string
}

interface IndexGit {
  index: string
  /** Where git runs, and its environment on the private repository and index. */
  cwd: string
  env: Record<string, string>
}

export async function gitlinksIn({index, cwd, env}: IndexGit): Promise<Gitlink[]> {
  let buffer: Buffer
  try {
    buffer = readFileSync(index)
  } catch {
    return []
  }
  const parsed = parseIndex(buffer, objectFormatOf(index))
  if (parsed) return parsed.gitlinks()
  // An index hmm does not parse (version 4, from the origin): git lists it.
  const listed = await git(['ls-files', '--stage', '-z'], {cwd, env})
  return listed.stdout
    .split('\0')
    .filter(line => line.startsWith('160000 '))
    .map(line => ({path: line.slice(line.indexOf('\t') + 1), id: line.split(' ')[1]}))
}

/** Takes every gitlink out of the index; returns them for restoreGitlinks. */
export async function takeOutGitlinks(on: IndexGit): Promise<Gitlink[]> {
  const gitlinks = await gitlinksIn(on)
  if (gitlinks.length === 0) return gitlinks
  const input = gitlinks.map(link => `${link.path}\0`).join('')
  await git(['update-index', '--force-remove', '-z', '--stdin'], {cwd: on.cwd, env: on.env, input})
  return gitlinks
}

/** Puts back the gitlinks git did not record again whose directory is still there, nothing in the index at or below it; returns those. */
export async function restoreGitlinks(on: IndexGit, tree: string, gitlinks: Gitlink[]): Promise<Gitlink[]> {
  if (gitlinks.length === 0) return []
  const env = {...on.env, GIT_LITERAL_PATHSPECS: '1'}
  const listed = await git(['ls-files', '-z', '--', ...gitlinks.map(link => link.path)], {cwd: on.cwd, env})
  const paths = listed.stdout.split('\0').filter(Boolean)
  const recorded = (path: string) => paths.some(other => other === path || other.startsWith(`${path}/`))
  const back = gitlinks.filter(link => !recorded(link.path) && lstatSync(join(tree, link.path), {throwIfNoEntry: false})?.isDirectory())
  if (back.length === 0) return []
  const input = back.map(link => `160000 ${link.id}\t${link.path}\0`).join('')
  await git(['update-index', '-z', '--index-info'], {cwd: on.cwd, env: on.env, input})
  return back
}

/*
 * A nested repository git cannot record as a gitlink makes git add fail,
 * for the user's own git too: one of another object format than the index
 * recording it (a SHA-256 one in a plain directory, whose private
 * repository is SHA-1; a SHA-1 one in a SHA-256 repository), or one with no
 * commit checked out (a fresh `git init`). hmm leaves such a repository
 * out, as it leaves out what git ignores. Its format and HEAD are read from
 * its files; git never runs in it.
 */

/** The object format of the repository in dir, where dir/.git is a directory; undefined otherwise. */
function nestedFormat(dir: string): ObjectFormat | undefined {
  const config = readRegularFile(join(dir, '.git', 'config'))
  if (config === undefined) return undefined
  return /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 'sha256' : 'sha1'
}

/** Of the paths `git ls-files --others` listed, the nested repositories ("path/") git cannot record in an index of `format`. */
export function unrecordableRepositories(root: string, listed: string[], format: ObjectFormat): string[] {
  return listed
    .filter(path => path.endsWith('/'))
    .map(path => path.slice(0, -1))
    .filter(path => {
      const found = nestedFormat(join(root, path))
      return found !== undefined && (found !== format || readWorkspaceHead(join(root, path)) === null)
    })
}

/** Pathspecs leaving out the nested repositories under options.cwd that git cannot record (asked after a git add failed). */
export async function excludingUnrecordable(options: GitOptions, format: ObjectFormat): Promise<string[]> {
  const listed = await git(['ls-files', '-z', '--others', '--exclude-standard'], options)
  return unrecordableRepositories(options.cwd, listed.stdout.split('\0').filter(Boolean), format).map(path => `:(exclude,literal)${path}`)
}
