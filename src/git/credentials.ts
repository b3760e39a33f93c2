// Credentials git keeps in a config file (SPEC "Sandbox", Reading): a token
// in http.<url>.extraHeader (actions/checkout persists the job's
// GITHUB_TOKEN there by default), in a URL's userinfo (a remote's url or
// pushurl, a proxy), or in the base of a url.<base>.insteadOf rewrite. The
// workspace's repository and the command's view of the user's global
// config get copies without them (app/git-credentials.ts); the user's own
// files keep them (hmm pr pushes with the origin's).
//
// Security: git runs here only with --file on a scratch copy hmm wrote
// (no repository of the workspace's, no include followed), never on a file
// the command could have changed.
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {isGitCredential} from '../sandbox/env.js'
import {holdsLogin} from '../sandbox/secret-values.js'
import {configEntries, git} from './git.js'

/** A first look, without git: most config files hold nothing of the kind. */
const MAY_HOLD = /extraheader|:\/\/[^\s/?#@]+@|password=/i

/** `text` with the login taken out of each URL that holds one (secret-values.ts holdsLogin); the rest as it was. */
function withoutLogins(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, (url, scheme: string) => (holdsLogin(url) ? scheme : url))
}

/** include.path and includeIf.<condition>.path (git-config(1), INCLUDES). */
const INCLUDE = '^include(if\\..*)?\\.path$'

/**
 * The files the config file `file` (holding `text`) includes, whatever the
 * condition, as git would find them for the user whose home is `home`
 * (`~/`; a relative path from the file's directory). Git runs with --file
 * on the user's own file (never the workspace's), from `/`: no repository's
 * config is read.
 */
export async function includedFiles(file: string, text: string, home: string): Promise<string[]> {
  if (!/include/i.test(text)) return []
  const listed = await git(['config', '--file', file, '--null', '--get-regexp', INCLUDE], {cwd: '/', okStatuses: [1]})
  return configEntries(listed.stdout).flatMap(([, path]) => settingPath(path, dirname(file), home) ?? [])
}

/** Settings that name a file git reads: the user's ignore and attribute files, a commit message template. */
const NAMED_FILES = '^(core\\.excludesfile|core\\.attributesfile|commit\\.template)$'

/** The files the config file `file` (holding `text`) names that git reads (NAMED_FILES), as includedFiles finds them. */
export async function namedFiles(file: string, text: string, home: string): Promise<string[]> {
  if (!/excludesfile|attributesfile|template/i.test(text)) return []
  const listed = await git(['config', '--file', file, '--null', '--get-regexp', NAMED_FILES], {cwd: '/', okStatuses: [1]})
  return configEntries(listed.stdout).flatMap(([, path]) => settingPath(path, dirname(file), home) ?? [])
}

/**
 * The file a config setting names by `path`, as git finds it for the user
 * whose home is `home` (`~/`; a relative path from `dir`: an include's
 * file's directory); undefined for none of the user's.
 */
export function settingPath(path: string | undefined, dir: string, home: string): string | undefined {
  // %(prefix)/ is git's installation: nothing of the user's.
  if (path === undefined || path === '' || path.startsWith('%(prefix)/')) return undefined
  return path.startsWith('~/') ? join(home, path.slice(2)) : resolve(dir, path)
}

/**
 * The config file's `text` without its credentials, or undefined if it
 * holds none: entries that are a credential whole (env.ts isGitCredential) go; a
 * value's login is taken out of it (`remote.origin.url` keeps working for
 * fetches that need none). `scratch` is a path hmm may write and remove.
 */
export async function withoutCredentials(text: string, scratch: string): Promise<string | undefined> {
  if (!MAY_HOLD.test(text)) return undefined
  writeFileSync(scratch, text, {mode: 0o600})
  try {
    const options = {cwd: dirname(scratch)}
    const file = ['config', '--file', scratch]
    const listed = configEntries((await git([...file, '--null', '--list'], options)).stdout)
    const unset = listed.filter(([key, value]) => isGitCredential(key, value))
    const changed = listed.filter(
      (entry): entry is [string, string] => !unset.includes(entry) && entry[1] !== undefined && withoutLogins(entry[1]) !== entry[1],
    )
    if (unset.length === 0 && changed.length === 0) return undefined
    // By value: a helper that prints a password goes, the other helpers stay. Status 5: gone already (listed twice).
    for (const [key, value] of unset) {
      await git([...file, ...(value === undefined ? ['--unset-all', key] : ['--fixed-value', '--unset-all', key, value])], {...options, okStatuses: [5]})
    }
    for (const [key, value] of changed) await git([...file, '--fixed-value', '--replace-all', key, withoutLogins(value), value], {...options, okStatuses: [5]})
    return readFileSync(scratch, 'utf8')
  } finally {
    rmSync(scratch, {force: true})
  }
}
