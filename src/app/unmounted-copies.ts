// Without a mount namespace (isolation = "landlock-only", macOS) the
// cleaned copies of the user's files (git's, npm's and pip's configs,
// start-up files: cleaned-copy.ts) cannot be bound over the files they
// stand for. There each file a copy is made of is unreadable to the
// command instead, and where a tool has a variable naming its config file,
// the variable names the copy, which the command may read: git's global
// and system files, npm's user config, pip's. What has no such variable
// (a start-up file with a key in it, yarn's files, a file git includes)
// stays unreadable. A file in a place the command writes in place (cargo's
// config in ~/.cargo) is read as it is: hiding it would keep anything new
// from being made beside it (policy.ts CACHE_SECRETS).
import {join} from 'node:path'
import {canonical, isWithin} from '../sandbox/paths.js'
import {replaceFile} from './cleaned-copy.js'
import {gitConfigBinds, globalConfigs, systemConfigs} from './git-credentials.js'
import {npmConfigBinds, npmUserConfig} from './npm-config.js'
import {startupFileBinds} from './startup-files.js'
import {pipUserConfigs, toolConfigBinds} from './tool-configs.js'
import {existsSync} from 'node:fs'
import type {Bind} from '../sandbox/policy.js'

export interface UnmountedCopies {
  /** The user's files the copies stand for. */
  hidden: string[]
  /** The copies the variables name. */
  readable: string[]
  env: Record<string, string>
}

/** The variables that name a tool's config file, and what else they name (SandboxPolicy.home; hmm sandbox says so). */
export const COPY_VARIABLES = ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'NPM_CONFIG_USERCONFIG', 'PIP_CONFIG_FILE']

/** A value as git's config format writes it: quoted, its backslashes, quotes and newlines escaped. */
const gitValue = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`

/**
 * GIT_CONFIG_GLOBAL names one file where git reads two (the XDG one, then
 * ~/.gitconfig): a file of hmm's that includes each, in git's order, as
 * its copy where it has one. It, and the copies it includes, to be read.
 */
function gitGlobal(root: string, files: string[], copyOf: (file: string) => string | undefined): string[] {
  if (!files.some(copyOf)) return []
  const included = files.filter(file => existsSync(file)).map(file => copyOf(file) ?? file)
  const global = join(root, 'git-config', 'global')
  replaceFile(global, `[include]\n${included.map(file => `\tpath = ${gitValue(file)}\n`).join('')}`, 0o600)
  return [global, ...files.flatMap(file => copyOf(file) ?? [])]
}

/**
 * Makes the cleaned copies in the workspace's directory `root` for this
 * command: the files they stand for, those not in a place of `writable`,
 * are hidden; the variables name the copies.
 */
export async function unmountedCopies(
  root: string,
  env: NodeJS.ProcessEnv,
  home: string,
  {origin, configs, writable}: {origin: string; configs: string[]; writable: string[]},
): Promise<UnmountedCopies> {
  const binds: Bind[] = [
    ...(await gitConfigBinds(root, env, home, origin)),
    ...npmConfigBinds(root, env, home),
    ...toolConfigBinds(root, env, home, configs),
    ...startupFileBinds(root, home),
  ]
  const copyOf = (file: string) => binds.find(bind => bind.target === canonical(file))?.source
  const first = (files: string[]) => files.map(copyOf).find(copy => copy !== undefined)
  const [global, ...globalCopies] = gitGlobal(root, globalConfigs(env, home), copyOf)
  const pointers: Array<[string, string | undefined]> = [
    ['GIT_CONFIG_GLOBAL', global],
    ['GIT_CONFIG_SYSTEM', first(systemConfigs(env))],
    ['NPM_CONFIG_USERCONFIG', first([npmUserConfig(env, home)])],
    // pip reads its user files and then this one, which wins: the first with a copy (those are unreadable).
    ['PIP_CONFIG_FILE', first(pipUserConfigs(env, home))],
  ]
  const named = pointers.filter((pointer): pointer is [string, string] => pointer[1] !== undefined)
  return {
    hidden: binds.map(bind => bind.target).filter(target => !writable.some(place => isWithin(target, place))),
    readable: [...named.map(([, copy]) => copy), ...globalCopies],
    env: Object.fromEntries(named),
  }
}
