// Git's credentials kept out of the sandbox (git/credentials.ts): taken out
// of the workspace's repository when the tree is made, and on Linux with
// the namespaces out of every other git config file the command could read
// (the user's global ones, the system's, the origin's repository's, as root
// other users', and what they include) as the command sees them (a copy
// bound over each, as an agent's state file is). Without the namespaces
// (macOS, landlock-only) git is pointed at the copies by its variables
// (unmounted-copies.ts).
import {lstatSync, mkdirSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {includedFiles, namedFiles, withoutCredentials} from '../git/credentials.js'
import {gitDirsOf, readable} from '../git/top.js'
import {canonical} from '../sandbox/paths.js'
import {otherHomes, type Bind} from '../sandbox/policy.js'
import {replaceFile} from './cleaned-copy.js'

const isFile = (path: string) => lstatSync(path, {throwIfNoEntry: false})?.isFile() === true

/**
 * A config file to read, where links lead: one that cannot be looked at (as
 * root of a user namespace, another home's, 0700) is none.
 */
function isConfigFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

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

/** The user's global git config files, as git finds them (git-config(1), FILES), in the order git reads them (the XDG one first). */
export function globalConfigs(env: NodeJS.ProcessEnv, home: string): string[] {
  if (env.GIT_CONFIG_GLOBAL) return [env.GIT_CONFIG_GLOBAL]
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config')
  return [join(xdg, 'git', 'config'), join(home, '.gitconfig')]
}

/** The system's git config file (git's default place), unless git is told to read none. */
export function systemConfigs(env: NodeJS.ProcessEnv): string[] {
  if (env.GIT_CONFIG_NOSYSTEM) return []
  return [env.GIT_CONFIG_SYSTEM || '/etc/gitconfig']
}

/** How deep includes are followed (git's own limit is 10). */
const MAX_INCLUDE_DEPTH = 10

/**
 * Each git config file the command could read with a credential in it, as
 * a config file and the home it belongs to (for `~/` in its includes): the
 * user's global ones and the system's; the origin's repository's (the
 * command reads the origin as it is); run as root, every other home's (as
 * their secrets are hidden: policy.ts otherHomes).
 */
function configsToClean(env: NodeJS.ProcessEnv, home: string, origin: string | undefined): Array<[string, string]> {
  const others = otherHomes(home).flatMap(dir => [join(dir, '.gitconfig'), join(dir, '.config', 'git', 'config')].map((file): [string, string] => [file, dir]))
  const repositories = origin === undefined ? [] : gitDirsOf(origin).flatMap(repositoryConfigs)
  return [...[...globalConfigs(env, home), ...systemConfigs(env), ...repositories].map((file): [string, string] => [file, home]), ...others]
}

/**
 * The files the user's global git config files include and name (an
 * identity kept in ~/.gitconfig.local, ~/.gitignore_global, a commit
 * template), followed as git follows includes: the composed home shows
 * them (sandbox/home.ts), so git inside reads the settings it does
 * outside. Credentials are taken out of the copies the command reads
 * (gitConfigBinds).
 */
export async function gitSettingFiles(env: NodeJS.ProcessEnv, home: string): Promise<string[]> {
  const found: string[] = []
  const follow = async (file: string, depth: number): Promise<void> => {
    const text = isConfigFile(file) ? readable(file) : undefined
    if (text === undefined) return
    found.push(file, ...(await namedFiles(file, text, home)))
    if (depth < MAX_INCLUDE_DEPTH) for (const included of await includedFiles(file, text, home)) await follow(included, depth + 1)
  }
  for (const file of globalConfigs(env, home)) await follow(file, 0)
  // Where XDG_CONFIG_HOME moves git's directory, its default ignore and attributes files too.
  return env.XDG_CONFIG_HOME ? [...found, join(env.XDG_CONFIG_HOME, 'git')] : found
}

/**
 * Copies of the git config files the command could read (configsToClean),
 * and of each file they include, that hold credentials, without them: made
 * in the workspace's directory `root` for this command (the user's may
 * have changed since the last), and bound over the user's (actions/checkout
 * keeps its token in a file a repository's config includes).
 */
export async function gitConfigBinds(root: string, env: NodeJS.ProcessEnv, home: string, origin?: string): Promise<Bind[]> {
  const dir = join(root, 'git-config')
  const binds: Bind[] = []
  const seen = new Set<string>()
  const clean = async (file: string, owner: string, depth: number): Promise<void> => {
    if (!isConfigFile(file)) return
    const target = canonical(file)
    if (seen.has(target)) return
    seen.add(target)
    const text = readable(file)
    if (text === undefined) return
    mkdirSync(dir, {recursive: true, mode: 0o700})
    const cleaned = await withoutCredentials(text, join(dir, `scratch-${process.pid}`))
    if (cleaned !== undefined) {
      const copy = join(dir, String(binds.length))
      replaceFile(copy, cleaned, 0o600)
      binds.push({source: copy, target})
    }
    if (depth < MAX_INCLUDE_DEPTH) for (const included of await includedFiles(file, text, owner)) await clean(included, owner, depth + 1)
  }
  for (const [file, owner] of configsToClean(env, home, origin)) await clean(file, owner, 0)
  return binds
}
