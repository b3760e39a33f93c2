// npm's user config (~/.npmrc) mixes settings the command's npm needs
// (nodedir, registry, prefix, cafile, save-exact) with the user's
// registry logins. With the namespaces the command reads a copy without
// the logins, bound over the user's, as git's config files are
// (git-credentials.ts); without them the file stays hidden whole
// (policy.ts SECRETS) and NPM_CONFIG_USERCONFIG names the copy
// (unmounted-copies.ts).
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {isAbsolute, join} from 'node:path'
import {canonical, isWithin, unique} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'
import {cleanedCopy} from './cleaned-copy.js'

/** The user's npm config file, as npm finds it. */
export function npmUserConfig(env: NodeJS.ProcessEnv, home: string): string {
  return env.NPM_CONFIG_USERCONFIG || env.npm_config_userconfig || join(home, '.npmrc')
}

/**
 * A key of .npmrc that holds a login (`//registry.example/:_authToken`,
 * `_auth`, `_password`, a client certificate's `key` and `cert`) or names
 * one: npm's own credential keys, and anything called a token, password
 * or secret.
 */
const CREDENTIAL_KEY = /(^|:)(_authtoken|_auth|_password|password|username|email|key|cert|keyfile|certfile)$|token|secret/i

/** A value that is a login whatever its key: a private key's block. */
const CREDENTIAL_VALUE = /-----BEGIN [A-Z ]*PRIVATE KEY-----|^\s*"?-----BEGIN/

/**
 * The key of a line as npm's ini parser reads it: quotes taken off, a
 * list's `[]` dropped; undefined for a comment, a section or no setting.
 */
function keyOf(line: string): string | undefined {
  const raw = /^\s*([^=;#\s[][^=]*?)\s*=/.exec(line)?.[1]
  if (raw === undefined) return undefined
  const unquoted = /^(["'])(.*)\1$/.exec(raw)?.[2] ?? raw
  return unquoted.replace(/\[\]$/, '')
}

/** Whether a key of npm's config (and yarn 1's, which reads the same keys) sets a credential. */
export const isNpmCredentialKey = (key: string) => CREDENTIAL_KEY.test(key)

/** The file without the lines that set a credential; comments, sections and blank lines kept. */
export function withoutNpmCredentials(text: string): string {
  return text
    .split('\n')
    .filter(line => {
      const key = keyOf(line)
      return key === undefined || !(CREDENTIAL_KEY.test(key) || CREDENTIAL_VALUE.test(line.slice(line.indexOf('=') + 1)))
    })
    .join('\n')
}

/**
 * Whether a cleaned copy is made: the file (or where its link leads, as a
 * profile switcher's ~/.npmrc -> ~/.npmrcs/work) is a regular file. Only
 * then may the policy stop hiding it (app/session.ts).
 */
export function cleansNpmConfig(env: NodeJS.ProcessEnv, home: string): boolean {
  return statSync(npmUserConfig(env, home), {throwIfNoEntry: false})?.isFile() === true
}

/** Where the Node version managers keep each version's prefix, beneath the home. */
const VERSION_PREFIXES = [
  '.nvm/versions/node',
  '.local/share/fnm/node-versions',
  '.volta/tools/image/node',
  '.asdf/installs/nodejs',
  '.local/share/mise/installs/node',
]

/**
 * The config files of the npm prefixes in the home (`<prefix>/etc/npmrc`,
 * read by npm as its global config), which are shown with their toolchain:
 * those on PATH (`<prefix>/bin`), and every version a manager keeps, not
 * only the one in use (the command may run another).
 */
function globalConfigs(path: string[], home: string): string[] {
  const onPath = path.filter(dir => isAbsolute(dir) && isWithin(canonical(dir), canonical(home))).map(dir => join(dir, '..'))
  const versions = VERSION_PREFIXES.flatMap(rel => {
    const dir = join(home, rel)
    try {
      return readdirSync(dir).flatMap(version => [join(dir, version), join(dir, version, 'installation')])
    } catch {
      return []
    }
  })
  return [...onPath, ...versions].map(prefix => join(prefix, 'etc', 'npmrc')).filter(file => statSync(file, {throwIfNoEntry: false})?.isFile() === true)
}

/**
 * The cleaned copies, made in the workspace's directory `root` for this
 * command, each bound over the file it cleans (where its link leads): the
 * user's config, and the global configs of npm prefixes in the home that
 * hold a login.
 */
export function npmConfigBinds(root: string, env: NodeJS.ProcessEnv, home: string): Bind[] {
  const user = cleansNpmConfig(env, home) ? [npmUserConfig(env, home)] : []
  const binds: Bind[] = []
  for (const file of unique([...user, ...globalConfigs((env.PATH ?? '').split(':'), home)].map(canonical))) {
    const text = readFileSync(file, 'utf8')
    const cleaned = withoutNpmCredentials(text)
    if (cleaned === text && !user.some(path => canonical(path) === file)) continue
    binds.push(cleanedCopy(root, binds.length === 0 ? 'npmrc' : `npmrc.${binds.length}`, cleaned, file))
  }
  return binds
}
