// Git's credentials kept out of the sandbox (git/credentials.ts): taken out
// of the workspace's repository when the tree is made, and on Linux with
// the namespaces out of the user's global config as the command sees it (a
// copy bound over it, as an agent's state file is). Without the namespaces
// (macOS, landlock-only) ~/.gitconfig is read as it is (MANUAL says so).
import {lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {withoutCredentials} from '../git/credentials.js'
import {canonical} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'

/** Writes `text` to `path` by a rename, so a link there is replaced, never followed. */
function replaceFile(path: string, text: string, mode: number): void {
  const next = `${path}.hmm-${process.pid}`
  writeFileSync(next, text, {mode})
  renameSync(next, path)
}

const isFile = (path: string) => lstatSync(path, {throwIfNoEntry: false})?.isFile() === true

/** The directories in `dir`, none if it is not one. */
function directoriesIn(dir: string): string[] {
  try {
    return readdirSync(dir, {withFileTypes: true})
      .filter(entry => entry.isDirectory())
      .map(entry => join(dir, entry.name))
  } catch {
    return []
  }
}

/**
 * The config files of the repository in `gitDir` and of its submodules'
 * (modules/<name>, a name holding slashes a path there, their own
 * submodules' beneath), regular files only.
 */
function repositoryConfigs(gitDir: string): string[] {
  const submodules = (dir: string): string[] => directoriesIn(dir).flatMap(path => (isFile(join(path, 'HEAD')) ? repositoryConfigs(path) : submodules(path)))
  return [...['config', 'config.worktree'].map(name => join(gitDir, name)).filter(isFile), ...submodules(join(gitDir, 'modules'))]
}

/**
 * Takes the credentials out of the fresh clone's repository (`tree`/.git),
 * before the command starts: the files are the origin's as cloned, which
 * nothing of the workspace has run on yet. `root` is the workspace's own
 * directory, for git's scratch copy.
 */
export async function removeTreeCredentials(tree: string, root: string): Promise<void> {
  const gitDir = join(tree, '.git')
  if (!lstatSync(gitDir, {throwIfNoEntry: false})?.isDirectory()) return
  for (const file of repositoryConfigs(gitDir)) {
    const cleaned = await withoutCredentials(readFileSync(file, 'utf8'), join(root, `git-config-scratch-${process.pid}`))
    if (cleaned !== undefined) replaceFile(file, cleaned, lstatSync(file).mode & 0o777)
  }
}

/** The user's global git config files, as git finds them (git-config(1), FILES). */
function globalConfigs(env: NodeJS.ProcessEnv, home: string): string[] {
  if (env.GIT_CONFIG_GLOBAL) return [env.GIT_CONFIG_GLOBAL]
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config')
  return [join(home, '.gitconfig'), join(xdg, 'git', 'config')]
}

/**
 * Copies of the user's global git config files that hold credentials,
 * without them, made in the workspace's directory `root` for this command
 * (the user's may have changed since the last), and bound over the user's.
 */
export async function gitConfigBinds(root: string, env: NodeJS.ProcessEnv, home: string): Promise<Bind[]> {
  const dir = join(root, 'git-config')
  const binds: Bind[] = []
  for (const [index, file] of globalConfigs(env, home).entries()) {
    if (!statSync(file, {throwIfNoEntry: false})?.isFile()) continue
    mkdirSync(dir, {recursive: true, mode: 0o700})
    const cleaned = await withoutCredentials(readFileSync(file, 'utf8'), join(dir, `scratch-${process.pid}`))
    if (cleaned === undefined) continue
    const copy = join(dir, String(index))
    replaceFile(copy, cleaned, 0o600)
    binds.push({source: copy, target: canonical(file)})
  }
  return binds
}
