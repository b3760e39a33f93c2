// Package managers' config files mix settings a build needs (a registry's
// or mirror's address, a proxy, a CA file, aliases) with the user's logins.
// One function per format takes the logins out and leaves every other line
// as it is: the command's tools read their settings as outside
// (tool-configs.ts binds the copies). Lines are judged as the environment is
// too (sandbox/secret-values.ts): a URL's login is taken out of the URL, a
// line that still holds a credential goes.
import {holdsCredential, withoutLogins} from '../sandbox/secret-values.js'
import {isNpmCredentialKey} from './npm-config.js'

/** The lines of `text` less those `drops` judges a credential, URLs' logins taken out, any line still holding a credential left out. */
function keptLines(text: string, drops: (lines: string[]) => boolean[]): string {
  const lines = text.split('\n')
  const dropped = drops(lines)
  return lines
    .filter((_, at) => !dropped[at])
    .map(withoutLogins)
    .filter(line => !holdsCredential(line))
    .join('\n')
}

const unquoted = (key: string) => /^(["'])(.*)\1$/.exec(key)?.[2] ?? key

/**
 * yarn 1's ~/.yarnrc: `key value` lines with npm's keys
 * (`"//registry/:_authToken" "..."`, `_auth`, `email`), and `always-auth`,
 * which without its login would only make every install fail.
 */
export function cleanYarnrc(text: string): string {
  return keptLines(text, lines =>
    lines.map(line => {
      const key = /^\s*("[^"]*"|'[^']*'|[^\s#"']\S*)/.exec(line)?.[1]
      return key !== undefined && (isNpmCredentialKey(unquoted(key)) || unquoted(key) === 'always-auth')
    }),
  )
}

/** yarn berry's keys that hold a login, at any depth (npmScopes.X, npmRegistries.X), and npmAlwaysAuth as always-auth. */
const BERRY_CREDENTIAL = /^(npmAuthToken|npmAuthIdent|npmAlwaysAuth)$/

/**
 * yarn berry's ~/.yarnrc.yml: each `npmAuthToken:`, `npmAuthIdent:` and
 * `npmAlwaysAuth:` key with what it holds (a folded or block value's
 * lines, more indented than the key); blank lines kept.
 */
export function cleanYarnrcYml(text: string): string {
  return keptLines(text, lines => {
    let keyIndent: number | undefined
    return lines.map(line => {
      const indent = line.search(/\S/)
      if (indent < 0) return false
      if (keyIndent !== undefined && indent > keyIndent) return true
      const key = /^\s*(["']?)(\w+)\1\s*:/.exec(line)?.[2]
      keyIndent = key !== undefined && BERRY_CREDENTIAL.test(key) ? indent : undefined
      return keyIndent !== undefined
    })
  })
}

/**
 * An INI file's settings `isCredential` names, each with its continuation
 * lines (indented, as pip's extra-index-url lists its URLs).
 */
function iniCredentialLines(lines: string[], isCredential: (key: string) => boolean): boolean[] {
  let dropping = false
  return lines.map(line => {
    if (/^\s+\S/.test(line) && dropping) return true
    const key = /^([^=:#;[\s][^=:]*?)\s*[=:]/.exec(line)?.[1]
    dropping = key !== undefined && isCredential(key)
    return dropping
  })
}

/**
 * pip's pip.conf: `client-cert` (a file holding a private key) goes; an
 * index's or proxy's URL keeps its address without its login
 * (`https://user:pw@host/simple` -> `https://host/simple`) rather than
 * going whole: without the line pip would look up the same names on the
 * public index, where anyone may publish them; with it, it asks the
 * private index and is refused, plainly.
 */
export function cleanPipConf(text: string): string {
  // pip reads client_cert as client-cert, in any case.
  return keptLines(text, lines => iniCredentialLines(lines, key => /^client[-_]cert$/i.test(key)))
}

/** Cargo's keys that hold or fetch a registry's login. */
const CARGO_CREDENTIAL = /^(token|credential-provider|global-credential-providers|secret-key|secret-key-subject)$/

/** A TOML string, basic or literal. */
const TOML_STRING = String.raw`(?:"(?:[^"\\]|\\.)*"|'[^']*')`

/** A login's pair in an inline table (`{ index = "...", token = "..." }`), with the comma that joins it. */
const CARGO_INLINE_PAIR = new RegExp(
  String.raw`\s*,\s*(?:token|credential-provider|secret-key|secret-key-subject)\s*=\s*${TOML_STRING}|(?<=\{)\s*(?:token|credential-provider|secret-key|secret-key-subject)\s*=\s*${TOML_STRING}\s*,?`,
  'g',
)

/**
 * Cargo's config.toml (and its old name, config): the registries' tokens
 * and credential providers (`[registry] token`, `[registries.X] token`,
 * dotted or in an inline table), an array's lines with its key. Their
 * logins are in ~/.cargo/credentials(.toml), hidden whole.
 */
export function cleanCargoConfig(text: string): string {
  const pairsOut = text
    .split('\n')
    .map(line => (line.includes('{') ? line.replace(CARGO_INLINE_PAIR, '') : line))
    .join('\n')
  return keptLines(pairsOut, lines => {
    let open = 0
    return lines.map(line => {
      if (open > 0) {
        open += bracketDepth(line)
        return true
      }
      const key = /^\s*([\w.\s"'-]+?)\s*=/.exec(line)?.[1]
      const last = key?.split('.').pop()?.trim()
      if (last === undefined || !CARGO_CREDENTIAL.test(unquoted(last))) return false
      open = Math.max(0, bracketDepth(line.slice(line.indexOf('=') + 1)))
      return true
    })
  })
}

/** How many more arrays a line opens than it closes (strings not counted). */
function bracketDepth(line: string): number {
  const bare = line.replace(new RegExp(TOML_STRING, 'g'), '')
  return (bare.match(/\[/g)?.length ?? 0) - (bare.match(/]/g)?.length ?? 0)
}

/**
 * Maven's elements that hold a login: a server's or proxy's `<password>`,
 * a server's `<passphrase>` and `<privateKey>`, and a server's
 * `<httpHeaders>` (GitLab's Private-Token, Authorization), whole lines
 * where an element fills one.
 */
const MAVEN_CREDENTIAL = /(^[ \t]*)?<(password|passphrase|privateKey|httpHeaders)\b[^>]*?(?:\/>|>[\s\S]*?<\/\2\s*>)([ \t]*\r?\n)?/gm

/** Maven's settings.xml: servers keep their ids and user names, mirrors and proxies their addresses, without the logins. */
export function cleanMavenSettings(text: string): string {
  const cleaned = text.replace(MAVEN_CREDENTIAL, (_, lead: string | undefined, _name, trail: string | undefined) =>
    lead !== undefined && trail !== undefined ? '' : `${lead ?? ''}${trail ?? ''}`,
  )
  return withoutLogins(cleaned)
}
