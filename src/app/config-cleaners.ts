// Package managers' config files mix settings a build needs (a registry's
// or mirror's address, a proxy, a CA file, aliases) with the user's logins.
// One function per format takes the logins out and leaves every other line
// as it is: the command's tools read their settings as outside
// (tool-configs.ts binds the copies). Lines are judged as the environment is
// too (sandbox/secret-values.ts): a URL's login is taken out of the URL, a
// line that still holds a credential goes.
import {parse} from 'smol-toml'
import {holdsCredential, withoutLogins} from '../sandbox/secret-values.js'
import {isNpmCredentialKey} from './npm-config.js'

/**
 * A URL path's segment that is a token: entitlement tokens (Cloudsmith's
 * `dl.cloudsmith.io/<token>/`, Gemfury's `pypi.fury.io/<token>/`) sit in
 * the path, not the user part. Judged by shape: a long run of letters and
 * digits mixed as random text is, where a name or version is not.
 */
function isTokenSegment(segment: string): boolean {
  if (!/^[A-Za-z0-9_-]{12,}$/.test(segment)) return false
  const digits = segment.replace(/\D/g, '').length
  const mixedCase = /[a-z]/.test(segment) && /[A-Z]/.test(segment)
  const words = segment.split(/[-_]/)
  return digits >= 2 && /[A-Za-z]/.test(segment) && (mixedCase || words.some(word => word.length >= 20)) && words.some(word => word.length >= 12)
}

/**
 * Hosts whose URLs put a token as the path's first segment: Cloudsmith's
 * (`dl.cloudsmith.io/<token>/<org>/...`, but not its `public` and `basic`
 * paths) and Gemfury's (`pypi.fury.io/<token>/<org>/`).
 */
const TOKEN_FIRST = [
  {host: /^dl\.cloudsmith\.io$/i, not: /^(public|basic)$/},
  {host: /(^|\.)fury\.io$/i, not: /^$/},
]

/** Whether a line holds a URL with a token in its path. */
export function holdsTokenInPath(line: string): boolean {
  for (const [, host, path] of line.matchAll(/[a-z][a-z0-9+.-]*:\/\/(?:[^\s/?#"'@]*@)?([^\s/?#"':]+)[^\s/?#"']*(\/[^\s?#"']*)/gi)) {
    const segments = path.split('/').filter(segment => segment !== '')
    if (segments.some(isTokenSegment)) return true
    const first = TOKEN_FIRST.find(known => known.host.test(host))
    if (first !== undefined && segments.length >= 2 && !first.not.test(segments[0])) return true
  }
  return false
}

/** The lines of `text` less those `drops` judges a credential, URLs' logins taken out, any line still holding a credential left out. */
function keptLines(text: string, drops: (lines: string[]) => boolean[]): string {
  const lines = text.split('\n')
  const dropped = drops(lines)
  return lines
    .filter((_, at) => !dropped[at])
    .map(withoutLogins)
    .filter(line => !holdsCredential(line) && !holdsTokenInPath(line))
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
      // yarn 1 reads `key value` and, as YAML, `key: value`: a key with its colon, and the colon's value glued on.
      const key = /^\s*("[^"]*"|'[^']*'|[^\s#"']\S*)/.exec(line)?.[1]
      if (key === undefined) return false
      const bare = unquoted(key.replace(/:$/, ''))
      return [bare, bare.replace(/:[^:/]*$/, '')].some(name => isNpmCredentialKey(name) || name === 'always-auth')
    }),
  )
}

/** yarn berry's keys that hold a login, at any depth (npmScopes.X, npmRegistries.X), and npmAlwaysAuth as always-auth. */
const BERRY_CREDENTIAL = /^(npmAuthToken|npmAuthIdent|npmAlwaysAuth)$/

/**
 * yarn berry's ~/.yarnrc.yml: each `npmAuthToken:`, `npmAuthIdent:` and
 * `npmAlwaysAuth:` key with what it holds (a folded or block value's
 * lines, more indented than the key), and any line, or flow map over
 * several lines, that names one (`npmScopes: { acme: { npmAuthToken: X } }`)
 * whole; blank lines kept.
 */
export function cleanYarnrcYml(text: string): string {
  return keptLines(text, lines => {
    const dropped = lines.map(() => false)
    let keyIndent: number | undefined
    let flow: number[] = []
    let depth = 0
    lines.forEach((line, at) => {
      const bare = line.replace(/"(?:[^"\\]|\\.)*"|'[^']*'|\s#.*$/g, '""')
      if (depth > 0 || /[{[]/.test(bare)) {
        flow.push(at)
        depth += (bare.match(/[{[]/g)?.length ?? 0) - (bare.match(/[}\]]/g)?.length ?? 0)
        if (depth > 0) return
        if (flow.some(index => BERRY_NAMED.test(lines[index]))) for (const index of flow) dropped[index] = true
        flow = []
        depth = 0
      }
      const indent = line.search(/\S/)
      if (indent < 0) return
      if (keyIndent !== undefined && indent > keyIndent) return (dropped[at] = true)
      const key = /^\s*(["']?)(\w+)\1\s*:/.exec(line)?.[2]
      keyIndent = key !== undefined && BERRY_CREDENTIAL.test(key) ? indent : undefined
      if (keyIndent !== undefined || BERRY_NAMED.test(line)) dropped[at] = true
    })
    // A flow map left open to the end: none of it shown.
    for (const index of flow) dropped[index] = true
    return dropped
  })
}

/** A line that names one of berry's logins anywhere, as a flow map's key. */
const BERRY_NAMED = /\b(npmAuthToken|npmAuthIdent|npmAlwaysAuth)\b/

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

/** A login's key as an inline table writes it: bare or quoted. */
const CARGO_INLINE_KEY = String.raw`(["']?)(?:token|credential-provider|secret-key|secret-key-subject)\1`

/** A login's pair in an inline table (`{ index = "...", token = "..." }`), with the comma that joins it. */
const CARGO_INLINE_PAIR = new RegExp(
  String.raw`\s*,\s*${CARGO_INLINE_KEY}\s*=\s*${TOML_STRING}|(?<=\{)\s*${CARGO_INLINE_KEY.replace('\\1', '\\2')}\s*=\s*${TOML_STRING}\s*,?`,
  'g',
)

/** The TOML text's tables, each from its header to the next (the keys before the first, first), as lines. */
function tomlTables(text: string): string[][] {
  const tables: string[][] = [[]]
  let open: string | undefined
  for (const line of text.split('\n')) {
    if (open === undefined && /^\s*\[/.test(line)) tables.push([])
    tables[tables.length - 1].push(line)
    for (const [quotes] of line.replace(/\\./g, '').matchAll(/"""|'''/g)) {
      if (open === undefined) open = quotes
      else if (open === quotes) open = undefined
    }
  }
  return tables.filter(lines => lines.length > 0)
}

/** The TOML text's values, or undefined when TOML cannot read it. */
function tomlOf(text: string): unknown {
  try {
    return parse(text)
  } catch {
    return undefined
  }
}

/** Whether a value read from cargo's config names a login at any depth. */
function holdsCargoLogin(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  return Object.entries(value).some(([key, inner]) => CARGO_CREDENTIAL.test(key) || holdsCargoLogin(inner))
}

/** A table's lines without the logins' keys (an array's lines with its key) and inline pairs. */
function cargoTableWithoutLogins(text: string): string {
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

/**
 * Cargo's config.toml (and its old name, config): the registries' tokens
 * and credential providers (`[registry] token`, `[registries.X] token`,
 * dotted or in an inline table), an array's lines with its key; a table
 * whose logins cannot be taken out line by line (a multi-line string)
 * goes whole. Undefined, for a file not to be shown, when TOML cannot
 * read it or what is left still holds a login. Their logins are in
 * ~/.cargo/credentials(.toml), hidden whole.
 */
export function cleanCargoConfig(text: string): string | undefined {
  if (tomlOf(text) === undefined) return undefined
  const cleaned = tomlTables(text)
    .flatMap(lines => {
      const table = cargoTableWithoutLogins(lines.join('\n'))
      const values = tomlOf(table)
      return values === undefined || holdsCargoLogin(values) ? [] : [table]
    })
    .join('\n')
  const values = tomlOf(cleaned)
  return values === undefined || holdsCargoLogin(values) ? undefined : cleaned
}

/** How many more arrays a line opens than it closes (strings not counted). */
function bracketDepth(line: string): number {
  const bare = line.replace(new RegExp(TOML_STRING, 'g'), '')
  return (bare.match(/\[/g)?.length ?? 0) - (bare.match(/]/g)?.length ?? 0)
}

/**
 * Maven's elements that hold a login: a server's or proxy's `<password>`,
 * a server's `<passphrase>` and `<privateKey>`, a server's `<httpHeaders>`
 * (GitLab's Private-Token, Authorization), and any element (a profile's
 * properties: `<gpg.passphrase>`, `<sonar.login>`, `<github.token>`) whose
 * name names one; whole lines where an element fills one.
 */
const MAVEN_CREDENTIAL =
  /(?<lead>^[ \t]*)?<([\w.-]*(?:password|passwd|passphrase|privateKey|httpHeaders|token|secret|login|auth|api[._-]?key|credential)[\w.-]*)\b[^>]*?(?:\/>|>[\s\S]*?<\/\2\s*>)(?<trail>[ \t]*\r?\n)?/gim

/** A `<property>` whose `<name>` names a credential (a plugin's or a header's `<name>github.token</name><value>X</value>`). */
const MAVEN_CREDENTIAL_PROPERTY =
  /(?<lead>^[ \t]*)?<property\b[^>]*>(?:(?!<\/property\s*>)[\s\S])*?<name>[^<]*(?:password|passwd|passphrase|privateKey|token|secret|login|auth|api[._-]?key|credential)[^<]*<\/name>[\s\S]*?<\/property\s*>(?<trail>[ \t]*\r?\n)?/gi

/** A DOCTYPE with its own entities (`<!ENTITY pw "...">` used as `&pw;`): their values are text any element may show. */
const DOCTYPE = /(?<lead>^[ \t]*)?<!DOCTYPE\b(?:[^[>]*\[[\s\S]*?\]\s*>|[^>]*>)(?<trail>[ \t]*\r?\n)?/gim

/** An element whose text uses an entity the DOCTYPE defined (not XML's own five, nor a character's). */
const ENTITY_USE = /(?<lead>^[ \t]*)?<([\w.-]+)\b[^>]*>[^<]*&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)[\w.-]+;[^<]*<\/\2\s*>(?<trail>[ \t]*\r?\n)?/gim

/** What an element (or the DOCTYPE) becomes: nothing, with its line where it filled one. */
function wholeLines(...match: unknown[]): string {
  const {lead, trail} = match.at(-1) as {lead?: string; trail?: string}
  return lead !== undefined && trail !== undefined ? '' : `${lead ?? ''}${trail ?? ''}`
}

/**
 * Maven's settings.xml: servers keep their ids and user names, mirrors and
 * proxies their addresses, without the logins; no DOCTYPE. Undefined, for
 * the file not to be shown, when an entity is still declared.
 */
export function cleanMavenSettings(text: string): string | undefined {
  const cleaned = withoutLogins(
    text.replace(DOCTYPE, wholeLines).replace(ENTITY_USE, wholeLines).replace(MAVEN_CREDENTIAL_PROPERTY, wholeLines).replace(MAVEN_CREDENTIAL, wholeLines),
  )
  return /<!(DOCTYPE|ENTITY)/i.test(cleaned) ? undefined : cleaned
}
