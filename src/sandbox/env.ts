// The sandboxed command's environment (SPEC "Sandbox", Reading and Other
// programs): hmm's own, less what would hand the command a credential or a
// way into the user's session.
//
// Security: a token in the environment is read as easily as a file, and a
// variable naming a socket (ssh-agent, tmux, D-Bus, an editor's server)
// tells the command where to ask a program outside the sandbox to act for
// it. The namespaces hide the sockets themselves where they can; removing
// the variables holds on every platform and fallback.
import {holdsCredential, holdsLogin} from './secret-values.js'
import {updateChecksOff} from './update-checks.js'

/** Credentials named outright: those the patterns below would miss. */
const CREDENTIAL_NAMES = [
  'GOOGLE_APPLICATION_CREDENTIALS',
  'DOCKER_AUTH_CONFIG',
  'REGISTRY_AUTH_FILE',
  'SSHPASS',
  'NPM_CONFIG__AUTH',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
  'KUBECONFIG',
  'CI_JOB_JWT',
  'ARM_ACCESS_KEY',
  // Bitwarden's unlocked vault: with it, `bw get password ...` answers.
  'BW_SESSION',
  // SonarQube's token, by its old name.
  'SONAR_LOGIN',
]

/**
 * Credentials by the shape of their name, as CI systems mask them and
 * similar tools filter them (codex drops *KEY*, *SECRET*, *TOKEN*): a word
 * TOKEN, SECRET, PASSWORD, PASSWD, PASS (DB_PASS), PASSPHRASE,
 * CREDENTIAL(S), APIKEY, AUTH (REGISTRY_AUTH; npm's `_auth`, `_authToken`
 * below), PAT (a personal access token: GITHUB_PAT, which R's gh and
 * usethis read), JWT, COOKIE(S), WEBHOOK (a webhook's URL is its secret:
 * SLACK_WEBHOOK_URL); a name ending in _KEY or holding _KEY_ (API keys,
 * AWS_ACCESS_KEY_ID), or ending in PASSWORD (PGPASSWORD) or _PWD (DB_PWD,
 * ORACLE_PWD; the shell's PWD and OLDPWD have no underscore); AUTHKEY and
 * AUTHTOKEN as one word (TS_AUTHKEY, NGROK_AUTHTOKEN); a wallet's seed
 * phrase (MNEMONIC, *_MNEMONIC, *_SEED_PHRASE: whoever has it has the
 * wallet; RANDOM_SEED stays); and whole families (AZURE_*). Whole words
 * only: PATH, GIT_ASKPASS, OAUTHLIB_* stay.
 */
const CREDENTIAL_PATTERNS = [
  /(^|_)(TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PASSPHRASE|CREDENTIAL|CREDENTIALS|APIKEY|AUTH|AUTHKEY|AUTHTOKEN|PAT|JWT|COOKIE|COOKIES|WEBHOOK|MNEMONIC)(_|$)/i,
  /_KEY$|_KEY_|PASSWORD$|_PWD$/i,
  /(^|_)SEED_PHRASE$/i,
  /^AZURE_/i,
  /^NPM_CONFIG_.*(_AUTH|AUTHTOKEN)/i,
  // 1Password CLI's signed-in sessions, one per account (OP_SESSION_<account>).
  /^OP_SESSION_/i,
  // A password abbreviated at the end (LDAP_BIND_PW); not at the start: Playwright's PW_TEST_* are settings.
  /(^|_)PW$/i,
  // Bundler's login for a gem server, by its host (BUNDLE_GEMS__EXAMPLE__COM: dots written `__`); its settings
  // with a dot in their names (build.<gem>, local.<gem>, mirror.<uri>, github.https) are not logins.
  /^BUNDLE_(?!(BUILD|LOCAL|MIRROR)__|GITHUB__HTTPS$)\w*__/i,
]

/** `http.extraHeader` and `http.<url>.extraHeader` (section and name in any case). */
const EXTRA_HEADER = /^http\.(.+\.)?extraheader$/i

/** `credential.helper` and `credential.<url>.helper`. */
const CREDENTIAL_HELPER = /^credential\.(.+\.)?helper$/i

/**
 * Whether git's config entry `key` (= `value`) is a credential whole, in a
 * config file (git/credentials.ts) or in the environment: an extra header
 * (actions/checkout's token), a key holding a login
 * (`url.<base>.insteadOf`), a credential helper written as a shell snippet
 * that prints the password itself (CI scripts pasting a token into one).
 * A login in a value alone is holdsLogin's.
 */
export function isGitCredential(key: string, value: string | undefined): boolean {
  return EXTRA_HEADER.test(key) || holdsLogin(key) || (CREDENTIAL_HELPER.test(key) && value?.includes('password=') === true)
}

/**
 * Each built-in agent's login as variables (Claude Code's API key, token and
 * the long-lived login `claude setup-token` makes; Codex's key): credentials
 * as any other, kept only for the agent's own profile (config.ts), as its
 * login files are hidden from every other command.
 */
const AGENT_KEYS: Record<string, string[]> = {
  claude: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  codex: ['OPENAI_API_KEY'],
}

/** The variables the built-in agent `name` keeps: its own login. */
export function agentKeys(name: string): string[] {
  return Object.hasOwn(AGENT_KEYS, name) ? AGENT_KEYS[name] : []
}

/**
 * Variables that name a socket or server of the user's session: agents
 * (ssh, gpg), terminal multiplexers (tmux, screen, zellij), D-Bus, the
 * runtime directory they live in, editors' servers (neovim, VS Code),
 * terminals' remote control (kitty, wezterm), and the display with its
 * cookies (with `ssh -X` the X server is a port on the loopback, which
 * the command reaches with the user's network: whoever authenticates types
 * into the user's windows).
 */
const SOCKET_NAMES = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'TMUX',
  'TMUX_PANE',
  'STY',
  'ZELLIJ',
  'ZELLIJ_SESSION_NAME',
  'XDG_RUNTIME_DIR',
  'NVIM',
  'NVIM_LISTEN_ADDRESS',
  'VSCODE_IPC_HOOK_CLI',
  'VSCODE_GIT_IPC_HANDLE',
  'KITTY_LISTEN_ON',
  'WEZTERM_UNIX_SOCKET',
  'DISPLAY',
  'XAUTHORITY',
  'ICEAUTHORITY',
  'WAYLAND_DISPLAY',
]

/** A Docker or Podman daemon on a unix socket is the user's (often root's) machine; one over TCP is a remote service. */
const SOCKET_IF_UNIX = ['DOCKER_HOST', 'CONTAINER_HOST']

/** hmm's own, set for the command and never inherited: a forged HMM_WORKSPACE_NAME must not survive an unnamed run. */
const OWN = ['HMM_WORKSPACE', 'HMM_WORKSPACE_NAME']

/** A config file's name pattern: `*` matches anything, the rest is exact. */
function matcher(patterns: string[]): (name: string) => boolean {
  const regexps = patterns.map(
    pattern =>
      new RegExp(
        `^${pattern
          .split('*')
          .map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  )
  return name => regexps.some(regexp => regexp.test(name))
}

/** Why hmm removes the variable by default, if it does. */
export function removedBecause(name: string, value: string): 'credential' | 'socket' | undefined {
  if (SOCKET_NAMES.includes(name) || (SOCKET_IF_UNIX.includes(name) && value.startsWith('unix://'))) return 'socket'
  if (CREDENTIAL_NAMES.includes(name.toUpperCase()) || CREDENTIAL_PATTERNS.some(pattern => pattern.test(name)) || holdsCredential(value)) return 'credential'
  return undefined
}

/** Git's configuration given in the environment (git-config(1), ENVIRONMENT): a count, then a key and a value per entry. */
const GIT_CONFIG = /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/

/** Git's entries as the environment gives them, numbered from 0. */
function gitEntries(entries: Array<[string, string]>): Record<string, string> {
  const env: Record<string, string> = {GIT_CONFIG_COUNT: String(entries.length)}
  entries.forEach(([key, value], index) => Object.assign(env, {[`GIT_CONFIG_KEY_${index}`]: key, [`GIT_CONFIG_VALUE_${index}`]: value}))
  return env
}

/** Whether hmm removes a variable: by `name` and `value`, `credential` when something else found it one. */
type Dropped = (name: string, value: string, credential?: boolean) => boolean

/**
 * The user's git entries in the environment, in their order: a key names a
 * setting, never a secret (though it holds _KEY_); an entry that is a
 * credential (isGitCredential) or whose value is removed goes whole,
 * renumbered, so the rest still parse.
 */
function gitConfig(base: NodeJS.ProcessEnv, dropped: Dropped): {env: Record<string, string>; removed: string[]} {
  const count = /^\d+$/.test(base.GIT_CONFIG_COUNT ?? '') ? Number(base.GIT_CONFIG_COUNT) : 0
  const indexes = Object.keys(base)
    .map(name => /^GIT_CONFIG_KEY_(\d+)$/.exec(name)?.[1])
    .filter((index): index is string => index !== undefined && Number(index) < count)
    .sort((a, b) => Number(a) - Number(b))
  const entries: Array<[string, string]> = []
  const removed: string[] = []
  for (const index of indexes) {
    const [key, value] = [base[`GIT_CONFIG_KEY_${index}`], base[`GIT_CONFIG_VALUE_${index}`]]
    if (key === undefined || value === undefined) continue
    if (dropped(`GIT_CONFIG_VALUE_${index}`, value, isGitCredential(key, value))) removed.push(`GIT_CONFIG_VALUE_${index}`)
    else entries.push([key, value])
  }
  return {env: entries.length > 0 ? gitEntries(entries) : {}, removed}
}

/** One string as git's sq_quote writes it: `'...'`, each `'` and `!` as `'\''` and `'\!'`. */
const SQ_QUOTED = "'[^']*'(?:\\\\[!']'[^']*')*"
/** An entry of GIT_CONFIG_PARAMETERS: `'key'='value'`, `'key'` (no value), or git's older `'key=value'`. */
const PARAMETER = new RegExp(`\\s*(${SQ_QUOTED})(?:=(${SQ_QUOTED}))?(?=\\s|$)`, 'y')

const sqDequoted = (quoted: string) => quoted.slice(1, -1).replace(/'\\([!'])'/g, '$1')

/** GIT_CONFIG_PARAMETERS' entries, each as written and as a key and value; undefined where git could not parse it either. */
function parameterEntries(text: string): Array<{written: string; key: string; value: string | undefined}> | undefined {
  const entries = []
  PARAMETER.lastIndex = 0
  while (PARAMETER.lastIndex < text.trimEnd().length) {
    const match = PARAMETER.exec(text)
    if (!match) return undefined
    const [key, value] = match[2] === undefined ? sqDequoted(match[1]).split(/=(.*)/s) : [sqDequoted(match[1]), sqDequoted(match[2])]
    entries.push({written: match[0].trim(), key, value})
  }
  return entries
}

/**
 * GIT_CONFIG_PARAMETERS (what `git -c` hands its children, set by wrappers
 * and CI scripts too) less its entries that hold a credential, as the
 * numbered entries are judged; one git could not parse goes whole.
 */
function gitParameters(base: NodeJS.ProcessEnv, dropped: Dropped): {env: Record<string, string>; removed: string[]} {
  const [name, text] = ['GIT_CONFIG_PARAMETERS', base.GIT_CONFIG_PARAMETERS]
  if (text === undefined) return {env: {}, removed: []}
  const entries = parameterEntries(text)
  if (entries === undefined) return dropped(name, text, true) ? {env: {}, removed: [name]} : {env: {[name]: text}, removed: []}
  const kept = entries.filter(({key, value}) => !dropped(name, value ?? '', isGitCredential(key, value)))
  const env = kept.length > 0 ? {[name]: kept.map(entry => entry.written).join(' ')} : {}
  return {env, removed: kept.length < entries.length ? [name] : []}
}

/** Read back: the entries of an environment gitConfig made. */
function entriesOf(env: Record<string, string>): Array<[string, string]> {
  const count = Number(env.GIT_CONFIG_COUNT ?? 0)
  return Array.from({length: count}, (_, index): [string, string] => [env[`GIT_CONFIG_KEY_${index}`], env[`GIT_CONFIG_VALUE_${index}`]])
}

/** Git settings appended to those the environment sets, which stay: git takes the last. */
function withGitSettings(env: Record<string, string>, settings: Array<[string, string]>): Record<string, string> {
  return {...env, ...gitEntries([...entriesOf(env), ...settings])}
}

/**
 * Commit and tag signing off, after what the environment sets: the user's
 * signing key and agent are hidden from the sandbox, so a signed commit
 * fails there. The commits taken back are unsigned (MANUAL "The command's
 * environment").
 */
export function unsignedGit(env: Record<string, string>): Record<string, string> {
  return withGitSettings(env, [
    ['commit.gpgsign', 'false'],
    ['tag.gpgsign', 'false'],
  ])
}

/**
 * Git in the workspace uses its repositories though another user owns them
 * (safe.directory): root's clone of a user's repository keeps the user as
 * the owner of its files, and git refuses a repository its user does not
 * own. Outside, hmm uses no repository git does not trust (git/origin.ts);
 * inside, the sandbox confines whatever their config runs, as it confines
 * a command that passes `-c safe.directory=*` itself.
 */
export function othersRepositoriesGit(env: Record<string, string>): Record<string, string> {
  return withGitSettings(env, [['safe.directory', '*']])
}

/**
 * No fsmonitor for an agent's git and its children's: the workspace's
 * repository is every command's to configure, and a core.fsmonitor a
 * command without the agent's profile set there (an install script) would
 * run at the agent's first `git status`, which Claude Code runs at start,
 * with the agent's login readable (attacker's review 5, F5). The
 * environment's entries outrank the repository's config. Hooks stay:
 * projects rely on them (pre-commit), and they run when the agent commits
 * or checks out, not at its start.
 */
export function noFsmonitor(env: Record<string, string>): Record<string, string> {
  return withGitSettings(env, [['core.fsmonitor', 'false']])
}

/** `base` less what the command does not get, and the names of what it does not get. */
function filtered(base: NodeJS.ProcessEnv, config: {keep: string[]; remove: string[]}): {env: Record<string, string>; removed: string[]} {
  const keep = matcher(config.keep)
  const remove = matcher(config.remove)
  const dropped: Dropped = (name, value, credential = false) => remove(name) || ((credential || removedBecause(name, value) !== undefined) && !keep(name))
  const env: Record<string, string> = {}
  const removed: string[] = []
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || OWN.includes(name) || GIT_CONFIG.test(name) || name === 'GIT_CONFIG_PARAMETERS') continue
    if (dropped(name, value)) removed.push(name)
    else env[name] = value
  }
  const git = [gitConfig(base, dropped), gitParameters(base, dropped)]
  return {env: Object.assign(env, ...git.map(part => part.env)), removed: [...removed, ...git.flatMap(part => part.removed)]}
}

/** The names `commandEnv` takes out of `base`, for `hmm sandbox`. */
export function removedVariables(base: NodeJS.ProcessEnv, config: {keep: string[]; remove: string[]}): string[] {
  return filtered(base, config).removed.sort()
}

/**
 * The command's environment: `base` less the credential and socket
 * variables (unless the config keeps them) and less what the config
 * removes, with tools' update checks off where `base` leaves them on,
 * then hmm's own variables.
 */
export function commandEnv(base: NodeJS.ProcessEnv, config: {keep: string[]; remove: string[]}, own: Record<string, string>): Record<string, string> {
  return {...updateChecksOff(base, matcher(config.remove)), ...filtered(base, config).env, ...own}
}
