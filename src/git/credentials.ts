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
import {dirname} from 'node:path'
import {holdsLogin} from '../sandbox/env.js'
import {git} from './git.js'

/** A first look, without git: most config files hold nothing of the kind. */
const MAY_HOLD = /extraheader|:\/\/[^\s/?#@]+@/i

/** `http.extraHeader` and `http.<url>.extraHeader`, as git lists them (section and name in lower case). */
const EXTRA_HEADER = /^http\.(.+\.)?extraheader$/i

/** `text` with the login taken out of each URL that holds one (env.ts holdsLogin); the rest as it was. */
function withoutLogins(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, (url, scheme: string) => (holdsLogin(url) ? scheme : url))
}

/** The entries of `git config --null --list`: a key, then a newline and its value unless it has none. */
function entries(listed: string): Array<[string, string | undefined]> {
  return listed
    .split('\0')
    .filter(entry => entry !== '')
    .map(entry => {
      const newline = entry.indexOf('\n')
      return newline < 0 ? [entry, undefined] : [entry.slice(0, newline), entry.slice(newline + 1)]
    })
}

/**
 * The config file's `text` without its credentials, or undefined if it
 * holds none: extra headers and entries whose key holds a login go; a
 * value's login is taken out of it (`remote.origin.url` keeps working for
 * fetches that need none). `scratch` is a path hmm may write and remove.
 */
export async function withoutCredentials(text: string, scratch: string): Promise<string | undefined> {
  if (!MAY_HOLD.test(text)) return undefined
  writeFileSync(scratch, text, {mode: 0o600})
  try {
    const options = {cwd: dirname(scratch)}
    const file = ['config', '--file', scratch]
    const listed = entries((await git([...file, '--null', '--list'], options)).stdout)
    const unset = new Set(listed.filter(([key]) => EXTRA_HEADER.test(key) || withoutLogins(key) !== key).map(([key]) => key))
    const changed = listed.filter((entry): entry is [string, string] => !unset.has(entry[0]) && entry[1] !== undefined && withoutLogins(entry[1]) !== entry[1])
    if (unset.size === 0 && changed.length === 0) return undefined
    // Status 5: the key is gone already (an entry listed twice).
    for (const key of unset) await git([...file, '--unset-all', key], {...options, okStatuses: [5]})
    for (const [key, value] of changed) await git([...file, '--fixed-value', '--replace-all', key, withoutLogins(value), value], {...options, okStatuses: [5]})
    return readFileSync(scratch, 'utf8')
  } finally {
    rmSync(scratch, {force: true})
  }
}
