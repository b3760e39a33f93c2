// npm's user config (~/.npmrc) mixes settings the command's npm needs
// (nodedir, registry, prefix, cafile, save-exact) with the user's
// registry logins. With the namespaces the command reads a copy without
// the logins, bound over the user's, as git's config files are
// (git-credentials.ts); without them the file stays hidden whole
// (policy.ts SECRETS).
import {lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {canonical} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'

/** The user's npm config file, as npm finds it. */
export function npmUserConfig(env: NodeJS.ProcessEnv, home: string): string {
  return env.NPM_CONFIG_USERCONFIG || env.npm_config_userconfig || join(home, '.npmrc')
}

/**
 * A key of .npmrc that holds a login (`//registry.example/:_authToken`,
 * `_auth`, `_password`, a certificate's key) or names one: npm's own
 * credential keys, and anything called a token, password or secret.
 */
const CREDENTIAL_KEY = /(^|:)(_authtoken|_auth|_password|password|keyfile|certfile)$|token|secret/i

/** The file without the lines that set a credential key; comments and blank lines kept. */
export function withoutNpmCredentials(text: string): string {
  return text
    .split('\n')
    .filter(line => {
      const key = /^\s*([^=;#\s][^=]*?)\s*=/.exec(line)?.[1]
      return key === undefined || !CREDENTIAL_KEY.test(key)
    })
    .join('\n')
}

/** The cleaned copy, made in the workspace's directory `root` for this command, bound over the user's file. */
export function npmConfigBinds(root: string, env: NodeJS.ProcessEnv, home: string): Bind[] {
  const file = npmUserConfig(env, home)
  if (!lstatSync(file, {throwIfNoEntry: false})?.isFile()) return []
  const copy = join(root, 'npmrc')
  mkdirSync(root, {recursive: true, mode: 0o700})
  const next = `${copy}.hmm-${process.pid}`
  writeFileSync(next, withoutNpmCredentials(readFileSync(file, 'utf8')), {mode: 0o600})
  renameSync(next, copy)
  return [{source: copy, target: canonical(file)}]
}
