// The config file (SPEC "Sandbox", Config file): what the user adds to the
// sandbox, validated once here at the edge, so everything past this module
// works with typed, complete settings. `hmm run`/`exec`/`sandbox` read it;
// a bad file stops them with one line naming the file and the key.
//
// Security: the file is the user's (outside every writable place of the
// sandbox), so it is trusted; it can only widen what the user could widen
// with -w anyway, or hide more.
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {basename, isAbsolute, join} from 'node:path'
import {parse, TomlError} from 'smol-toml'
import {debug, HmmError} from '../ui/errors.js'
import {tildify} from '../ui/format.js'
import {agentKeys} from './env.js'
import {unique} from './paths.js'
import {SECRETS, type Network} from './policy.js'

/** "full": namespaces, mounts and seccomp with Landlock; "landlock-only": the user's opt-out where namespaces cannot be had. */
export type Isolation = 'full' | 'landlock-only'
/** "none": no network; a list: only HTTP(S) to those hosts; "profile": the agent profile's hosts. Absent: the user's network. */
export type Net = 'none' | 'profile' | string[]

/** What one table of the file says; a key left out says nothing. */
/** "composed": the command's home holds only what work needs (sandbox/home.ts); "visible": the whole home less the secrets. */
export type HomeView = 'composed' | 'visible'

export interface Settings {
  write?: string[]
  show?: string[]
  hide?: string[]
  unhide?: string[]
  home?: HomeView
  /** Gitignore patterns of the origin's files never cloned into a workspace. */
  exclude?: string[]
  env?: {keep?: string[]; remove?: string[]}
  isolation?: Isolation
  net?: Net
}

/**
 * What `exclude` is when the file does not say: the project's own secrets
 * (a `.env` holds live keys), but not the examples kept beside them in the
 * repository, which hold none.
 */
export const DEFAULT_EXCLUDE = ['.env', '.env.*', '!.env.example', '!.env.sample', '!.env.template']

export interface Config {
  /** Where it was looked for (it need not exist). */
  file: string
  /** The home directory its ~ paths were expanded against. */
  home: string
  /** The top-level keys: for every command. */
  all: Settings
  /** `[agent.<command base name>]` tables. */
  agents: Record<string, Settings>
  /** `max_file_size`, in bytes: files larger are never read (top level only: it is hmm's, not a command's). */
  maxFileSize?: number
  /** `max_read_size`, in bytes: files larger together are never read in one look (top level only, as maxFileSize). */
  maxReadSize?: number
}

/** What applies to one command: the file's top level, then its agent's table. */
export interface Effective {
  write: string[]
  /** Paths of the home shown read-only in the composed home. */
  show: string[]
  home: HomeView
  hide: string[]
  unhide: string[]
  /** The top level's (or DEFAULT_EXCLUDE), then the agent's: the last pattern matching decides, as in a .gitignore. */
  exclude: string[]
  env: {keep: string[]; remove: string[]}
  isolation: Isolation
  net?: Net
  /**
   * The agent profile that applied, if the command is an agent's; `sets`: its table as it applies (built in,
   * changed by the file); `hosts`: what it needs to reach, for net = "profile".
   */
  agent?: {name: string; from: AgentSource; sets: Settings; hosts?: string[]} & AgentKeeping
  /** The agent's own places that do not exist yet: a grant needs them to exist, so hmm makes them first. */
  make: Array<{path: string; kind: 'directory' | 'file'}>
}

export type AgentSource = 'built-in' | 'config file' | 'built-in, changed by the config file'

/**
 * The agents people run, made to work out of the box (SPEC: without -w):
 * what each writes to keep its sessions, settings and login, and only that.
 * Claude Code (watched with strace, 2.1.x): its directory ~/.claude
 * (sessions, projects, settings, credentials, backups) and ~/.claude.json
 * (account and per-project state), both moved by CLAUDE_CONFIG_DIR. It
 * also tries a lock directory and temporary files beside ~/.claude.json;
 * those would need the whole home directory writable, and where they
 * cannot be made it writes ~/.claude.json in place. Codex: ~/.codex, moved
 * by CODEX_HOME.
 */
function builtInAgents(env: NodeJS.ProcessEnv, home: string): Record<string, Settings> {
  return {
    claude: {write: env.CLAUDE_CONFIG_DIR ? [env.CLAUDE_CONFIG_DIR] : [join(home, '.claude'), join(home, '.claude.json')]},
    codex: {write: [env.CODEX_HOME || join(home, '.codex')]},
  }
}

/**
 * How a built-in agent's places are written without anything it leaves
 * there running later in the user's own agent (SPEC "Sandbox" (4)): its
 * settings hold hooks, MCP servers, a status line or API key command; its
 * memory file, commands, sub-agents, skills and plugins are instructions
 * and code it follows at start. On Linux with the namespaces its directory
 * is a layer kept with the workspace (as the tool caches are), its login
 * written through to the user's, and its state file outside the directory
 * (~/.claude.json, which also holds MCP servers) a copy kept with the
 * workspace; elsewhere (macOS, landlock-only) only `inPlace` of its
 * directory is written, everything else there is read-only: a list of what
 * runs would always miss something (Claude Code's own local install in
 * ~/.claude/local, the scripts users keep beside their settings).
 */
export interface AgentKeeping {
  /** Directories overlaid with the workspace's layer. */
  layers: string[]
  /** Files given a copy of the workspace's own, the user's left as it was. */
  state: string[]
  /** Files written through the layer to the user's: the login, which a token refresh rewrites. */
  logins: string[]
  /** Where there is no layer, the only places of its directory it writes: its sessions, records and login. */
  inPlace: string[]
  /** Its records of every project (transcripts, prompts, file backups): in a layer, the workspace's own only. */
  records: string[]
}

/**
 * Where each agent keeps what it saw and was told in every project it ran
 * in: Claude Code's transcripts (projects/), backups of the files it edited
 * and the prompts typed (history.jsonl), its todos, plans, debug logs, shell
 * snapshots and session environments, and whole copies of ~/.claude.json
 * with every project's MCP servers (backups/); Codex's sessions (archived
 * too), prompts and log.
 * Users paste passwords there and tools print environments; the agent in a
 * workspace needs only the workspace's own (`--continue`, `resume`).
 */
const AGENT_RECORDS: Record<string, string[]> = {
  claude: ['projects', 'file-history', 'history.jsonl', 'backups', 'todos', 'plans', 'debug', 'shell-snapshots', 'session-env'],
  codex: ['sessions', 'archived_sessions', 'history.jsonl', 'log'],
}

/**
 * The directories each agent keeps its sessions in, made before it starts:
 * where its directory is written in place (landlock-only, macOS) only these,
 * its records and its login are writable, and nothing new can be made
 * directly in it.
 */
const AGENT_SESSIONS: Record<string, string[]> = {
  claude: ['projects', 'todos', 'shell-snapshots', 'statsig', 'session-env', 'file-history', 'debug', 'plans', 'ide', 'backups'],
  codex: ['sessions', 'log'],
}

function agentKeeping(name: string, env: NodeJS.ProcessEnv, home: string): AgentKeeping {
  const dir = name === 'claude' ? env.CLAUDE_CONFIG_DIR || join(home, '.claude') : env.CODEX_HOME || join(home, '.codex')
  const records = AGENT_RECORDS[name].map(rel => join(dir, rel))
  const logins = agentLogins(env, home)[name]
  return {
    layers: [dir],
    state: name === 'claude' && !env.CLAUDE_CONFIG_DIR ? [join(home, '.claude.json')] : [],
    logins,
    inPlace: unique([...AGENT_SESSIONS[name].map(rel => join(dir, rel)), ...records, ...logins]),
    records,
  }
}

/** What of the built-in keeping applies, as far as the profile in effect still writes the agent's places. */
function keepingFor(name: string, write: string[], env: NodeJS.ProcessEnv, home: string): AgentKeeping {
  if (!Object.hasOwn(AGENT_RECORDS, name)) return {layers: [], state: [], logins: [], inPlace: [], records: []}
  const keeping = agentKeeping(name, env, home)
  const layers = keeping.layers.filter(dir => write.includes(dir))
  const under = (path: string) => layers.some(dir => path.startsWith(`${dir}/`))
  return {
    layers,
    state: keeping.state.filter(file => write.includes(file)),
    logins: keeping.logins.filter(under),
    inPlace: keeping.inPlace.filter(under),
    records: keeping.records.filter(under),
  }
}

/**
 * Each built-in agent's login (Claude Code keeps its OAuth tokens in
 * .credentials.json on Linux; Codex in auth.json), written through its
 * layer when it refreshes its token.
 */
function agentLogins(env: NodeJS.ProcessEnv, home: string): Record<string, string[]> {
  return {
    claude: [join(env.CLAUDE_CONFIG_DIR || join(home, '.claude'), '.credentials.json')],
    codex: [join(env.CODEX_HOME || join(home, '.codex'), 'auth.json')],
  }
}

/**
 * Each built-in agent's own places, those its profile writes: its login,
 * its MCP servers' settings (their tokens in `env`), the transcripts and
 * prompts of every project it ran in. Secrets for every other command (a
 * package's install script run by `hmm run npm install` must not take
 * them), given back to the agent itself.
 */
function agentSecrets(env: NodeJS.ProcessEnv, home: string): Record<string, string[]> {
  return Object.fromEntries(Object.entries(builtInAgents(env, home)).map(([name, settings]) => [name, settings.write ?? []]))
}

/** The agents' places the default secrets (policy.ts SECRETS) miss: those CLAUDE_CONFIG_DIR or CODEX_HOME moved. */
function movedPlaces(places: Record<string, string[]>, home: string): string[] {
  const secrets = new Set(SECRETS.map(rel => join(home, rel)))
  return Object.values(places)
    .flat()
    .filter(path => !secrets.has(path))
}

/**
 * The hosts each built-in agent needs to work, for `net = "profile"` (an
 * opt-in: by default the network stays the user's, so nothing breaks
 * without a word): its model's API, and Claude Code's feature flags.
 */
const AGENT_HOSTS: Record<string, string[]> = {
  claude: ['api.anthropic.com', 'statsig.anthropic.com'],
  codex: ['api.openai.com', 'chatgpt.com'],
}

/** The agent's files among its places (the rest are directories): made empty, as the agent would make them. */
const AGENT_FILES: Record<string, string> = {'.claude.json': '{}\n'}

/** The built-in places of the profile in effect that are missing. */
function missing(write: string[], builtIn: string[]): Effective['make'] {
  return write
    .filter(path => builtIn.includes(path) && !existsSync(path))
    .map(path => ({path, kind: Object.hasOwn(AGENT_FILES, basename(path)) ? ('file' as const) : ('directory' as const)}))
}

/** The agent's session directories that are missing, in its layers. */
function missingSessions(name: string, write: string[], env: NodeJS.ProcessEnv, home: string): Effective['make'] {
  const {layers} = keepingFor(name, write, env, home)
  return layers
    .flatMap(dir => AGENT_SESSIONS[name].map(rel => join(dir, rel)))
    .filter(path => !existsSync(path))
    .map(path => ({path, kind: 'directory' as const}))
}

/** Makes the agent's missing places, before the command starts (hmm does it as the user, outside the sandbox). */
export function makeAgentPlaces(settings: Effective): void {
  for (const {path, kind} of settings.make) {
    try {
      if (kind === 'directory') mkdirSync(path, {recursive: true, mode: 0o700})
      else writeFileSync(path, AGENT_FILES[basename(path)], {flag: 'wx', mode: 0o600})
    } catch (error) {
      // Then the agent runs without it, as it would anywhere it may not write.
      debug(`could not make ${path}: ${(error as Error).message}`)
    }
  }
}

const KEYS = ['write', 'show', 'hide', 'unhide', 'home', 'exclude', 'env', 'isolation', 'net']
const ENV_KEYS = ['keep', 'remove']

export function configPath(env: NodeJS.ProcessEnv = process.env, home = env.HOME || homedir()): string {
  // XDG Base Directory: a relative value is invalid and ignored.
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config')
  return join(base, 'hmm', 'config.toml')
}

/** The config file, or an empty one where there is none. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, home = env.HOME || homedir()): Config {
  const file = configPath(env, home)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {file, home, all: {}, agents: {}}
    throw new HmmError(`${tildify(file, home)}: cannot be read: ${(error as Error).message}`)
  }
  return parseConfig(text, file, home)
}

export function parseConfig(text: string, file: string, home: string): Config {
  const bad = (key: string, what: string) => new HmmError(`${tildify(file, home)}: ${key}: ${what}`)
  let table: Record<string, unknown>
  try {
    table = parse(text)
  } catch (error) {
    if (!(error instanceof TomlError)) throw error
    // smol-toml's message is the reason, then a code frame: the reason is the line.
    throw new HmmError(`${tildify(file, home)}: line ${error.line}: ${error.message.split('\n')[0]}`)
  }
  const {agent, ...rest} = table
  const agents: Record<string, Settings> = {}
  if (agent !== undefined) {
    if (!isTable(agent)) throw bad('agent', 'expected tables [agent.<command name>]')
    for (const [name, settings] of Object.entries(agent)) {
      if (!isTable(settings)) throw bad(`agent.${name}`, 'expected a table')
      agents[name] = readSettings(settings, `agent.${name}.`, KEYS, home, bad)
    }
  }
  const {max_file_size: maxFileSize, max_read_size: maxReadSize, ...settings} = rest
  return {
    file,
    home,
    all: readSettings(settings, '', [...KEYS, 'max_file_size', 'max_read_size', 'agent'], home, bad),
    agents,
    ...(maxFileSize === undefined ? {} : {maxFileSize: readSize(maxFileSize, 'max_file_size', bad)}),
    ...(maxReadSize === undefined ? {} : {maxReadSize: readSize(maxReadSize, 'max_read_size', bad)}),
  }
}

const UNITS: Record<string, number> = {b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40}

/** A size: a whole number of bytes, or a string with a binary unit ("2 GiB"). */
function readSize(value: unknown, name: string, bad: Bad): number {
  const match = typeof value === 'string' ? /^\s*(\d+)\s*([a-z]+)?\s*$/i.exec(value) : null
  const bytes = typeof value === 'number' ? value : match ? Number(match[1]) * (UNITS[(match[2] ?? 'b').toLowerCase()] ?? NaN) : NaN
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw bad(name, 'expected a size in bytes, or with a unit (KiB, MiB, GiB, TiB), e.g. "2 GiB"')
  return bytes
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(item => typeof item === 'string')
}

type Bad = (key: string, what: string) => HmmError

function readSettings(table: Record<string, unknown>, prefix: string, keys: string[], home: string, bad: Bad): Settings {
  const settings: Settings = {}
  for (const [key, value] of Object.entries(table)) {
    const name = prefix + key
    switch (key) {
      case 'write':
      case 'show':
      case 'hide':
      case 'unhide':
        settings[key] = readPaths(value, name, home, bad)
        break
      case 'home':
        if (value !== 'composed' && value !== 'visible') throw bad(name, 'expected "composed" or "visible"')
        settings.home = value
        break
      case 'exclude':
        // Patterns of paths in the project, as a .gitignore holds them: no ~, nothing made absolute.
        if (!isStringList(value) || value.some(pattern => pattern.includes('\n'))) throw bad(name, 'expected a list of gitignore patterns')
        settings.exclude = value
        break
      case 'env':
        settings.env = readEnv(value, name, bad)
        break
      case 'isolation':
        if (value !== 'full' && value !== 'landlock-only') throw bad(name, 'expected "full" or "landlock-only"')
        settings.isolation = value
        break
      case 'net':
        if (value !== 'none' && value !== 'profile' && !isStringList(value)) throw bad(name, 'expected "none", "profile" or a list of hosts')
        settings.net = value
        break
      default:
        if (!keys.includes(key)) throw bad(name, `unknown key (keys: ${keys.join(', ')})`)
    }
  }
  return settings
}

/** Paths with ~ expanded; relative ones mean nothing in a file read from any directory, so they are refused. */
function readPaths(value: unknown, name: string, home: string, bad: Bad): string[] {
  if (!isStringList(value)) throw bad(name, 'expected a list of paths')
  return value.map(path => {
    if (path === '~') return home
    if (path.startsWith('~/')) return join(home, path.slice(2))
    if (isAbsolute(path)) return path
    throw bad(name, `expected a list of paths (absolute or starting with ~/): ${path}`)
  })
}

function readEnv(value: unknown, name: string, bad: Bad): Settings['env'] {
  if (!isTable(value)) throw bad(name, 'expected a table (keep = [...], remove = [...])')
  const env: Settings['env'] = {}
  for (const [key, names] of Object.entries(value)) {
    if (!ENV_KEYS.includes(key)) throw bad(`${name}.${key}`, `unknown key (keys: ${ENV_KEYS.join(', ')})`)
    if (!isStringList(names)) throw bad(`${name}.${key}`, 'expected a list of variable names')
    env[key as 'keep' | 'remove'] = names
  }
  return env
}

/** The agent profile for a command's base name: built in, and as the config file changes it (key by key). */
function agentProfile(config: Config, name: string, env: NodeJS.ProcessEnv): {settings: Settings; from: AgentSource; builtInWrite: string[]} | undefined {
  const builtIn = builtInAgents(env, config.home)
  const own = (table: Record<string, Settings>) => (Object.hasOwn(table, name) ? table[name] : undefined)
  const [base, changes] = [own(builtIn), own(config.agents)]
  const builtInWrite = base?.write ?? []
  if (base && changes) return {settings: {...base, ...changes}, from: 'built-in, changed by the config file', builtInWrite}
  if (base) return {settings: base, from: 'built-in', builtInWrite}
  if (changes) return {settings: changes, from: 'config file', builtInWrite}
  return undefined
}

/** What some run could write: the top level's paths and every agent profile's, built in or in the file. */
export function everyWrite(config: Config, env: NodeJS.ProcessEnv = process.env): string[] {
  const agents = [...Object.values(builtInAgents(env, config.home)), ...Object.values(config.agents)]
  return [config.all, ...agents].flatMap(settings => settings.write ?? [])
}

/** `--net none` or `--net HOST[,HOST...]` as the config file would say it; it replaces the file's `net`. */
export function netFromFlag(value: string): Net {
  if (value === 'none' || value === 'profile') return value
  const hosts = value.split(',').map(host => host.trim())
  if (hosts.some(host => host === '')) throw new HmmError(`--net takes none, profile or HOST[,HOST...]: ${value}`)
  return hosts
}

/** The network the command gets, as the policy says it: absent, the user's. */
export function networkOf(settings: Pick<Effective, 'net' | 'agent'>): Network | undefined {
  const {net, agent} = settings
  if (net === undefined) return undefined
  if (net === 'none') return {kind: 'none'}
  if (net !== 'profile') return {kind: 'proxy', hosts: net}
  if (!agent?.hosts) {
    const builtIn = Object.keys(AGENT_HOSTS).join(', ')
    const which = agent ? `${agent.name}'s has none` : 'this command has no agent profile'
    throw new HmmError(`net = "profile" is the host list of an agent's built-in profile (${builtIn}), and ${which}: give the hosts`)
  }
  return {kind: 'proxy', hosts: agent.hosts}
}

/** The settings for one command: the top level, and its agent's profile added (lists joined; single values replaced). */
export function settingsFor(config: Config, command: string[], env: NodeJS.ProcessEnv = process.env): Effective {
  const name = command.length > 0 ? basename(command[0]) : ''
  const agent = agentProfile(config, name, env)
  const layers = [config.all, ...(agent ? [agent.settings] : [])]
  const joined = (pick: (settings: Settings) => string[] | undefined) => layers.flatMap(settings => pick(settings) ?? [])
  const places = agentSecrets(env, config.home)
  const hide = joined(settings => settings.hide)
  // The agent's own places, unless the config file hides them by name.
  const own = (Object.hasOwn(places, name) ? places[name] : []).filter(path => !hide.includes(path))
  return {
    write: joined(settings => settings.write),
    show: joined(settings => settings.show),
    home: agent?.settings.home ?? config.all.home ?? 'composed',
    hide: [...hide, ...movedPlaces(places, config.home)],
    unhide: [...joined(settings => settings.unhide), ...own],
    exclude: [...(config.all.exclude ?? DEFAULT_EXCLUDE), ...(agent?.settings.exclude ?? [])],
    // The agent's own login as variables: its profile's alone (env.ts agentKeys).
    env: {keep: [...joined(settings => settings.env?.keep), ...(agent ? agentKeys(name) : [])], remove: joined(settings => settings.env?.remove)},
    isolation: agent?.settings.isolation ?? config.all.isolation ?? 'full',
    net: agent?.settings.net ?? config.all.net,
    ...(agent
      ? {
          agent: {
            name,
            from: agent.from,
            sets: agent.settings,
            ...(Object.hasOwn(AGENT_HOSTS, name) ? {hosts: AGENT_HOSTS[name]} : {}),
            ...keepingFor(name, agent.settings.write ?? [], env, config.home),
          },
        }
      : {}),
    make: agent ? [...missing(agent.settings.write ?? [], agent.builtInWrite), ...missingSessions(name, agent.settings.write ?? [], env, config.home)] : [],
  }
}
