// What a sandboxed command may do, decided once as plain data (SPEC
// "Sandbox"). Platforms only translate this: linux.ts into the helper's
// Landlock arguments, darwin.ts into a Seatbelt profile.
//
// Everything may be read except the hidden paths; only the tree, temp
// directories, devices, tool caches and -w paths may be written.
import {createHash} from 'node:crypto'
import {existsSync, lstatSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {basename, dirname, isAbsolute, join, resolve} from 'node:path'
import {composeHome, type ComposedHome} from './home.js'
import {canonical, canonicalAmong, entriesIn, isWithin, namesIn, unique} from './paths.js'
import {socketsWithin} from './sockets.js'
import {stopwatch} from '../ui/errors.js'

export type Platform = 'linux' | 'darwin'

export interface SandboxPolicy {
  /** The workspace tree: read, write, create, delete, rename — everything. */
  tree: string
  /** Roots of what may be read (minus `hidden`); besides `/`, files or directories read though a hidden path holds them (the cleaned copies: app/unmounted-copies.ts). */
  readable: string[]
  /** Paths that may also be written (minus `hidden`): temp dirs, caches, -w paths. */
  writable: string[]
  /** Paths inside writable ones that stay read-only: where caches keep programs that run outside the sandbox. */
  readOnly: string[]
  /**
   * Linux: paths inside writable ones where only plain files and
   * directories may be made, nothing renamed in or out: where programs
   * outside look for a socket (CACHE_RENDEZVOUS).
   */
  plainOnly: string[]
  /** Device directories: writable, with device ioctls (terminals). */
  devices: string[]
  /** Paths whose contents may not be read: secrets and hmm's own data. */
  hidden: string[]
  /** Linux: what the helper's namespaces give the command of its own (SPEC "Sandbox"). */
  isolation?: Isolation
  /**
   * Without the namespaces (landlock-only, macOS): the composed home
   * (sandbox/home.ts) as rules, there being no mount namespace to build
   * it in: nothing of the home may be read but its kept places, less the
   * hidden paths (Landlock: the home hidden, each place granted back;
   * Seatbelt: denied, then allowed).
   */
  home?: ComposedHome
  /** The command's network (SPEC "Network"); absent: the user's. */
  network?: Network
  /**
   * The command's $TMPDIR: on macOS always the workspace's own temp
   * directory (ownTmpOf), the one place besides the tree where it may reach
   * unix sockets; on Linux only where the user's cannot be its own (see
   * ownable).
   */
  tmpdir?: string
}

/**
 * The workspace's own temp directory, beside its tree (`<data>/<id>/tree/<name>`):
 * `<data>/<id>/tmp`, kept with the workspace (on Linux the helper puts it
 * over /tmp and $TMPDIR).
 */
export function ownTmpOf(tree: string): string {
  return join(dirname(dirname(tree)), 'tmp')
}

/** No network but loopback, or only HTTP(S) to these hosts through hmm's proxy (as the user wrote them). */
export type Network = {kind: 'none'} | {kind: 'proxy'; hosts: string[]}

/**
 * The mark of a host list (native-helpers/marks.c): a number below 2^48,
 * the same for the same hosts in any order or case, so hmm exec can tell
 * whether a command beside it has another list.
 */
export function hostsMark(hosts: string[]): number {
  const list = unique(hosts.map(host => host.toLowerCase())).sort()
  return createHash('sha256').update(list.join('\n')).digest().readUIntBE(0, 6)
}

export interface Isolation {
  /** Temporary directories the workspace's own is put over. */
  temp: string[]
  /** Tool caches overlaid, so what the command writes stays in the workspace. */
  caches: string[]
  /** The user's sockets and session directories, and the hidden paths that exist, covered with nothing. */
  masked: string[]
  /** hmm's data directory: covered with an empty one but for the workspace's own directory. */
  data: string
  /** Files bound over others after the caches are overlaid: an agent's login through its layer, its state's copy (config.ts AgentKeeping). */
  binds?: Bind[]
  /** The home as the command sees it (sandbox/home.ts); absent: the user's, less what is masked. */
  home?: ComposedHome
  /**
   * The agent profile the command has, if any: its layers over the caches
   * are its own, apart from those of the commands without it (which see
   * none of its, nor it theirs): a program such a command left in a cache
   * (~/.cargo/bin/git, first on PATH) would otherwise run in the agent,
   * with its login (attacker's review 5, F5).
   */
  agent?: string
}

export interface Bind {
  source: string
  target: string
}

/**
 * What a coding agent never needs to read, in the home directory (SPEC
 * "Reading"): credentials (a leaked key is the worst outcome), keyrings and
 * browser profiles (logins, cookies), and histories (passwords typed on
 * command lines, connection strings). Not a file inside a directory that is
 * commonly writable (~/.cache/huggingface/token, ~/.m2/settings-security.xml
 * with -w ~/.m2): Landlock grants by directory, so nothing new could be made
 * directly in that directory.
 */
/**
 * Logins kept in a cache: hidden only with the namespaces, where the cache
 * is a layer whose copy of them is whited out (mounts.c seal) and the rest
 * of the directory is written as before; without them the cache is written
 * in place and hiding a file would keep anything new from being made
 * beside it (see SECRETS).
 */
export const CACHE_SECRETS = ['.cache/huggingface/token', '.cache/huggingface/stored_tokens']

/**
 * The entries of the user's ~/.cache a command sees, where that cache is a
 * layer of its workspace (the namespaces, a composed home): what tools
 * fetch from registries and build, worth keeping warm. Every other entry
 * the user has is whited out in the layer (mounts.c seal), as no list of
 * what to hide could be complete: browsers' caches of the pages visited,
 * thumbnails of the user's pictures, editors' indexes of other projects,
 * a tool's login kept beside its cache. A tool not named here starts with
 * an empty cache in the workspace, as on a new machine.
 */
export const SHARED_CACHES = [
  // Python: pip, its managers and tools; Hugging Face's models (its token whited out: CACHE_SECRETS), torch's hub.
  ...['pip', 'pypoetry', 'pipenv', 'uv', 'pdm', 'hatch', 'pre-commit', 'black', 'ruff', 'matplotlib', 'huggingface', 'torch'],
  // JavaScript: node-gyp's headers, yarn, pnpm, corepack's package managers, TypeScript's typings, browsers for tests.
  ...['node-gyp', 'yarn', 'pnpm', 'node', 'typescript', 'ms-playwright', 'puppeteer', 'Cypress', 'electron', 'electron-builder', 'prisma', 'deno'],
  // Go's build cache, C and C++ compiler caches, Bazel (not its output bases: BAZEL_SHARED), Zig, the JVM's Coursier,
  // PHP's Composer, Erlang's rebar3, Nix.
  ...['go-build', 'golangci-lint', 'ccache', 'sccache', 'bazel', 'zig', 'coursier', 'composer', 'rebar3', 'nix', 'fontconfig'],
]

export const SECRETS = [
  // Keys and tokens of ssh, clouds, forges, registries and package managers.
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gh',
  '.netrc',
  '.git-credentials',
  '.config/git/credentials',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.docker/config.json',
  '.kube',
  '.config/gcloud',
  '.azure',
  '.oci',
  '.terraform.d',
  '.cargo/credentials',
  // uv's logins, in plain text where there is no keyring (uv auth login), in its toolchain's place; so are the GitHub
  // tokens of `nimble publish` and opam-publish (its whole place: the tokens, and its clones of the user's fork).
  '.local/share/uv/credentials',
  '.nimble/github_api_token',
  '.opam/plugins/opam-publish',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.config/hub',
  '.config/github-copilot',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.terraformrc',
  '.pulumi/credentials.json',
  '.config/doctl',
  '.fly',
  '.s3cfg',
  '.boto',
  '.config/rclone',
  '.databrickscfg',
  // Databases' passwords, vaults' tokens, encryption keys.
  '.pgpass',
  '.my.cnf',
  '.vault-token',
  '.authinfo',
  '.authinfo.gpg',
  '.config/sops',
  // Registries', tunnels', clusters' and services' logins.
  '.config/containers/auth.json',
  '.minikube',
  '.config/filezilla',
  '.config/ngrok',
  '.ngrok2',
  '.config/configstore',
  '.config/stripe',
  '.wakatime.cfg',
  '.config/syncthing',
  '.local/state/syncthing',
  // GitLab's CLI, Subversion's cached passwords, hosting and edge platforms' CLIs (Vercel, Netlify, Cloudflare's
  // wrangler, old and XDG places, and its tunnel's certificate, Supabase, Hetzner Cloud), Helm's repository passwords.
  '.config/glab-cli',
  '.subversion/auth',
  '.local/share/com.vercel.cli',
  '.config/netlify',
  '.wrangler',
  '.config/.wrangler',
  '.cloudflared',
  '.supabase',
  '.config/hcloud',
  '.config/helm',
  // Git Credential Manager's plaintext store, Gerrit's git cookies; package managers' logins kept beside their
  // settings (pip's index-url, Bundler's, NuGet's, sbt's and Ivy's): a private index's address is given back with
  // `unhide` (MANUAL), and with the namespaces npm's, yarn's and pip's are read as copies without their logins
  // (app/tool-configs.ts); data tools' and vaults' logins (dbt's profiles, Snowflake's connections, 1Password's CLI,
  // Hugging Face's old token place).
  '.gcm',
  '.gitcookies',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
  '.bundle/config',
  '.nuget/NuGet/NuGet.Config',
  '.config/NuGet/NuGet.Config',
  '.sbt/.credentials',
  '.ivy2/.credentials',
  '.dbt/profiles.yml',
  '.snowflake',
  '.config/op',
  '.huggingface/token',
  // The user's display: X11's and ICE's cookies (with ssh -X the display is a port on the loopback: whoever holds
  // the cookie types into the user's windows), VNC's password (a VNC server is the whole desktop).
  '.Xauthority',
  '.ICEauthority',
  '.vnc',
  '.config/tigervnc',
  // The agents' own places (login, MCP servers' settings with their tokens, transcripts of every project): each
  // built-in agent's profile gives its own back (config.ts agentSecrets), no other command reads them. Other agents'
  // and editors' MCP servers and logins.
  '.claude',
  '.claude.json',
  '.claude.json.backup',
  // (and every other entry of the home named .claude.json.<something>: SECRET_PREFIXES)
  '.codex',
  '.gemini',
  '.config/Claude',
  '.cursor',
  '.config/Cursor',
  '.codeium/windsurf',
  '.continue',
  // Tokens of servers on the loopback that run code for whoever holds them: Jupyter's kernels and servers,
  // code-server, VS Code's remote server (Remote-SSH: its connection token and port in ~/.vscode-server) and its
  // forks', VS Code's CLI (`code tunnel`, `code serve-web`). Claude Code's editor lock files are in ~/.claude/ide.
  '.local/share/jupyter/runtime',
  'Library/Jupyter/runtime',
  '.config/code-server',
  '.vscode-server',
  '.vscode-server-insiders',
  '.vscodium-server',
  '.cursor-server',
  '.windsurf-server',
  '.vscode/cli',
  '.vscode-insiders/cli',
  // Keyrings, password stores, client certificates, browser profiles (snap and Flatpak ones too: ~/.var/app is
  // every Flatpak app's data), messengers' sessions.
  '.local/share/keyrings',
  '.password-store',
  '.config/Bitwarden',
  '.pki',
  '.mozilla',
  '.librewolf',
  '.config/google-chrome',
  '.config/google-chrome-beta',
  '.config/google-chrome-unstable',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/microsoft-edge',
  '.config/microsoft-edge-beta',
  '.config/microsoft-edge-dev',
  '.config/vivaldi',
  '.config/opera',
  'snap/firefox',
  'snap/chromium',
  'snap/brave',
  'snap/thunderbird',
  '.var/app',
  '.thunderbird',
  '.config/discord',
  '.config/Slack',
  '.config/Signal',
  '.local/share/TelegramDesktop',
  // Shells' and REPLs' histories (zsh's where ZDOTDIR keeps it too: ~/.config/zsh is a start-up place sandbox/home.ts
  // shows).
  '.bash_history',
  '.zsh_history',
  '.zhistory',
  '.config/zsh/.zsh_history',
  '.config/zsh/.zhistory',
  '.local/share/fish',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.local/share/atuin',
  // Editors' and pagers' histories (searches, registers, command lines).
  '.viminfo',
  '.lesshst',
]

/**
 * Entries of a home directory hidden by the start of their name, those
 * there when the policy is made (one made later is unreadable anyway: the
 * home has no rule of its own): Claude Code's copies of ~/.claude.json
 * (.backup, .corrupted.<ms>, ...), each with every project's MCP servers
 * and their tokens. The agent's profile gives back ~/.claude.json only.
 */
export const SECRET_PREFIXES = ['.claude.json.']

/**
 * Where hmm keeps its data by default in a home (SPEC "Files"), hidden in
 * every home root's policy looks at, as the data directory is: each
 * workspace's directory holds copies of what the secrets hide (an agent's
 * state with its MCP servers' tokens, its login's layer, its transcripts),
 * and the other users' modes do not stop root (attacker's review 8, F8).
 */
export const DATA_PLACES: Record<Platform, string> = {linux: '.local/share/hmm', darwin: 'Library/Application Support/hmm'}

/**
 * The system's, which root could read: password hashes (and their backups,
 * which passwd and vipw leave, Debian's daily ones in /var/backups, and
 * the old ones pam_pwhistory keeps), TLS and VPN private keys, Wi-Fi and VPN
 * passwords, a cluster's keys, Kerberos' keytab.
 */
export const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/var/backups/shadow.bak',
  '/var/backups/gshadow.bak',
  '/etc/security/opasswd',
  '/etc/ssl/private',
  '/etc/pki/tls/private',
  '/etc/letsencrypt',
  '/etc/wireguard',
  '/etc/ipsec.secrets',
  '/etc/ppp/chap-secrets',
  '/etc/ppp/pap-secrets',
  '/etc/NetworkManager/system-connections',
  '/etc/kubernetes',
  '/etc/krb5.keytab',
]

/**
 * Run as root, the other homes (root's, each under /home, each /etc/passwd
 * names for a person): their secrets are hidden too, those there when the
 * policy is made (a secret that does not exist costs nothing only in the
 * user's own home, where the path is walked anyway). A home may be a link
 * (/home/alice -> /export/home/alice: automounters, a second disk) or lie
 * elsewhere (/srv/home/bob): stat follows the link, canonical names where
 * the home really is.
 */
export function otherHomes(home: string): string[] {
  if (process.getuid?.() !== 0) return []
  const users = namesIn('/home').map(name => join('/home', name))
  const own = canonical(home)
  // Most homes are named twice (/home and /etc/passwd): each looked at once.
  const named = unique(['/root', ...users, ...passwdHomes()])
  return unique(named.filter(dir => statSync(dir, {throwIfNoEntry: false})?.isDirectory()).map(canonical)).filter(dir => dir !== own)
}

/** The first uid of a person rather than a system account (login.defs' UID_MIN on Debian, Fedora, Arch). */
const UID_MIN = 1000

/**
 * The homes /etc/passwd names for people (uid UID_MIN or more): one read
 * of a small file. Users only a directory service knows are not listed
 * (enumerating one can take seconds); their homes are mostly under /home.
 */
function passwdHomes(): string[] {
  let text: string
  try {
    text = readFileSync('/etc/passwd', 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .map(line => line.split(':'))
    .filter(fields => fields.length >= 7 && Number(fields[2]) >= UID_MIN && isAbsolute(fields[5]))
    .map(fields => fields[5])
}

/** The ssh host keys (`/etc/ssh/*_key`), as they are when the policy is made: with them a machine can be impersonated. */
export function hostKeys(dir = '/etc/ssh'): string[] {
  return namesIn(dir)
    .filter(name => name.endsWith('_key'))
    .sort()
    .map(name => join(dir, name))
}

/** Package managers' and compilers' caches: builds need to write them, and they hold no secrets. */
export const CACHES: Record<Platform, string[]> = {
  linux: ['.cargo', '.rustup', '.cache', '.npm'],
  darwin: ['.cargo', '.rustup', '.cache', '.npm', 'Library/Caches'],
}

/**
 * Caches that are layers only with the namespaces: Go's module cache lies
 * in ~/go, a toolchain shown read-only, and `go get` of a module the user
 * has not got writes there. In a layer what the command fetched stays in
 * its workspace; written in place (without the namespaces) an extracted
 * module it changed would be built by the user's later builds, which Go
 * does not verify again, so there it stays read-only.
 */
export const LAYERED_ONLY = ['go/pkg/mod']

/**
 * Where the caches keep programs that run outside the sandbox later, or
 * name them: a command that wrote them would persist past its workspace
 * (rustup puts ~/.cargo/bin first on PATH, ~/.profile sources ~/.cargo/env
 * and fish env.fish; npx runs what it finds in ~/.npm/_npx; cargo's config
 * names the rustc-wrapper, linker and runner of every later cargo build).
 * Read-only wherever no overlay keeps the command's cache writes in its
 * workspace (macOS; Linux opted out): under the overlay what the command
 * writes there stays in the workspace too, and npx, cargo install and
 * rustup work.
 */
export const CACHE_PROGRAMS = [
  '.cargo/bin',
  '.cargo/env',
  '.cargo/env.fish',
  '.cargo/env.nu',
  '.cargo/config.toml',
  '.cargo/config',
  '.rustup/toolchains',
  '.npm/_npx',
]

/**
 * Where programs outside find a socket in the caches, to connect to and
 * hand secrets: git's credential cache (`credential.helper=cache`) listens
 * on ~/.cache/git/credential/socket, and the user's next HTTPS login is
 * stored in whatever listens there (attacker's review 8, F2). Written in
 * place (no overlay), no socket, link or FIFO may be made there, nor
 * anything renamed in or out; on Linux the rest of ~/.cache stays
 * writable, but new entries directly in it get only what such a place gets
 * (Landlock grants by directory: native-helpers/landlock.c walk_around),
 * so no new directory of ~/.cache can be one either. On macOS read-only.
 */
export const CACHE_RENDEZVOUS = ['.cache/git']

/**
 * The devices the command may write and use (terminal ioctls). On Linux the
 * names its own /dev holds (native-helpers/devices.c), never the user's
 * other terminals, disks, kernel log or consoles; its own terminal is
 * granted by the helper, whatever its name. macOS has no /dev of its own to give.
 */
export const DEVICES: Record<Platform, string[]> = {
  linux: ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty', '/dev/ptmx', '/dev/pts', '/dev/shm', '/dev/mqueue'],
  darwin: ['/dev'],
}

/** Temp directories every platform has; $TMPDIR is added to them. */
export const TEMP_DIRS: Record<Platform, string[]> = {
  linux: ['/tmp'],
  darwin: ['/tmp', '/private/tmp', '/private/var/folders'],
}

export interface PolicyInput {
  tree: string
  home: string
  dataDir: string
  /** Extra writable paths from -w, as the user gave them. */
  extraWritable: string[]
  /** More paths to hide (the config file's `hide`), absolute. */
  hide?: string[]
  /**
   * The origin the workspace was made from: hidden as named, without the
   * search for where links in it lead (a project's .venv/bin/python leads
   * to the system's Python, which is no secret).
   */
  origin?: string
  /** Secrets to give back (the config file's `unhide`), absolute; the data directory is never given back. */
  unhide?: string[]
  /** Every place of the user's hmm data (platform dataPlaces), hidden as `dataDir` is and never given back. */
  dataPlaces?: string[]
  tmpdir?: string
  platform: Platform
  network?: Network
  /** Linux: the helper's namespaces are in force (not opted out), so the caches are overlays. */
  namespaces?: boolean
  /** Agents' directories overlaid with the workspace's layer, as the caches are (Linux, namespaces). */
  layers?: string[]
  /** The command's agent profile, if it has one (Isolation.agent). */
  agent?: string
  /** Compose the home (sandbox/home.ts) of these and what the command may write: built by the helper with the namespaces, else as rules (SandboxPolicy.home). */
  compose?: {show: string[]; path: string[]; programs: string[]}
}

/** A place relative to a home, by its directory and name: the many homes root hides are looked at by these. */
interface Place {
  dir: string
  name: string
  rel: string
}

const placeOf = (rel: string): Place => ({dir: dirname(rel), name: basename(rel), rel})
const SECRET_PLACES = SECRETS.map(placeOf)
const HOME_PLACES: Record<Platform, Place[]> = {
  linux: [...SECRET_PLACES, placeOf(DATA_PLACES.linux)],
  darwin: [...SECRET_PLACES, placeOf(DATA_PLACES.darwin)],
}

/**
 * The secrets and hmm data that exist in `home`, relative to it, each
 * directory they are in read once: many homes, few places in each.
 */
function existingIn(home: string, platform: Platform): string[] {
  const listed = new Map<string, Set<string> | undefined>()
  const names = (dir: string): Set<string> | undefined => {
    if (!listed.has(dir)) {
      // Not read where its parent does not list it: most homes hold few of these places, and a failed read costs an
      // exception (as root, for every home).
      if (dir !== '.' && names(dirname(dir))?.has(basename(dir)) !== true) listed.set(dir, undefined)
      else {
        try {
          listed.set(dir, new Set(readdirSync(join(home, dir))))
        } catch {
          listed.set(dir, undefined)
        }
      }
    }
    return listed.get(dir)
  }
  return HOME_PLACES[platform].filter(({dir, name}) => names(dir)?.has(name)).map(({rel}) => rel)
}

/** The entries of each home whose names start as SECRET_PREFIXES say. */
function prefixed(homes: string[]): string[] {
  return homes.flatMap(home =>
    namesIn(home)
      .filter(name => SECRET_PREFIXES.some(prefix => name.startsWith(prefix)))
      .map(name => join(home, name)),
  )
}

/** A path and, if a symbolic link leads elsewhere, where it leads: both must be hidden. */
function bothForms(path: string): string[] {
  return unique([resolve(path), canonical(path)])
}

/** Whether `path` is a directory, or a link to one; false for any error. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path, {throwIfNoEntry: false})?.isDirectory() === true
  } catch {
    return false
  }
}

/** How deep, and how many entries, linksWithin looks: secrets are small directories; a browser profile is not. */
const LINK_SEARCH = {depth: 3, entries: 5000}

/**
 * Where the symbolic links inside a hidden directory lead: a key kept
 * elsewhere and linked into ~/.ssh (as dotfile managers do) is as secret as
 * the link, and Landlock sees only the path a file is reached by.
 */
function linksWithin(dir: string): string[] {
  // Most secrets' places are missing or files: a failed readdir costs an exception, a stat does not.
  if (!isDirectory(dir)) return []
  const targets: string[] = []
  let budget = LINK_SEARCH.entries
  const walk = (path: string, depth: number) => {
    const entries = entriesIn(path)
    // Most entries are neither: their paths are not made (a join per entry was most of this search's time).
    for (const entry of entries) {
      if (--budget < 0) return
      if (entry.isSymbolicLink()) targets.push(canonical(join(path, entry.name)))
      else if (depth > 1 && entry.isDirectory()) walk(join(path, entry.name), depth - 1)
    }
  }
  walk(dir, LINK_SEARCH.depth)
  return targets
}

/** What hiddenPaths reads of the policy's input. */
type HiddenInput = Pick<PolicyInput, 'tree' | 'home' | 'dataDir' | 'dataPlaces' | 'hide' | 'unhide' | 'origin' | 'platform'>

/**
 * The secrets in both their forms (bothForms), and where the links in them
 * lead; the other homes' hmm data, which no `unhide` gives back and whose
 * links are not searched (as the data directory's: the workspaces'
 * temporary directories are the commands' to fill with links).
 */
interface Secrets {
  forms: string[]
  linked: string[]
  data: string[]
}

/** What one secret's search found: its forms (bothForms) and where the links in it lead. */
interface Searched {
  forms: string[]
  linked: string[]
}

/**
 * Found once per hmm process (as the sockets are, sockets.ts): `hmm run`
 * asks three times (the origin's check, the command's policy, its record
 * of the work at the end), not with the same `unhide` (the command's gives
 * back the tool configs it reads as copies: app/session.ts cleanedConfigs),
 * and as root each search reads every home's secret places. So the homes
 * are listed once for a home, and each secret searched once. What the user
 * adds later reaches the next hmm command; the end's record reads no more
 * than the command itself could.
 */
const listed = new Map<string, {secrets: string[]; data: string[]}>()
const searched = new Map<string, Searched>()

/** The secrets and hmm data of the other homes (otherHomes), and the prefixed entries of all, as secretsOf sees them. */
function homesOf(home: string, platform: Platform): {secrets: string[]; data: string[]} {
  const key = JSON.stringify([home, platform])
  const known = listed.get(key)
  if (known) return known
  const homes = otherHomes(home)
  const existing = homes.flatMap(other => existingIn(other, platform).map(rel => ({rel, path: join(other, rel)})))
  const isData = ({rel}: {rel: string}) => rel === DATA_PLACES[platform]
  const found = {
    secrets: [...existing.filter(place => !isData(place)).map(({path}) => path), ...prefixed([home, ...homes])],
    // readdir follows a link to a directory: what it lists is what the secret's canonical form holds.
    data: existing.filter(isData).map(({path}) => path),
  }
  listed.set(key, found)
  return found
}

/** The secrets, the config's additions, minus what it gives back, and where links in them lead. */
function secretsOf(input: HiddenInput): Secrets {
  const unhidden = new Set((input.unhide ?? []).map(path => resolve(path)))
  const homes = homesOf(input.home, input.platform)
  const listed = [...SECRETS.map(rel => join(input.home, rel)), ...homes.secrets, ...SYSTEM_SECRETS, ...hostKeys(), ...(input.hide ?? [])]
  // Resolving hundreds of paths costs milliseconds, before V8 optimises it: only when the config gives something back.
  const secrets = unhidden.size === 0 ? listed : listed.filter(path => !unhidden.has(resolve(path)))
  const timing = stopwatch()
  const unsearched = secrets.filter(path => !searched.has(path))
  const known = new Map<string, string>()
  for (const path of unsearched) searched.set(path, {forms: unique([resolve(path), canonicalAmong(path, known)]), linked: linksWithin(path)})
  if (unsearched.length > 0) timing.lap(`searched ${unsearched.length} secrets' places`)
  const each = secrets.map(path => searched.get(path)!)
  return {forms: each.flatMap(({forms}) => forms), linked: each.flatMap(({linked}) => linked), data: homes.data}
}

/** The secrets and where links in them lead (but to the work); then hmm's data, every home's, whatever the config says. */
function hiddenPaths(input: HiddenInput): string[] {
  const {forms, linked, data} = secretsOf(input)
  // A link to the home directory, the tree or above them is not a secret's place: hiding it would hide the work.
  const broad = [input.home, input.tree, input.dataDir].map(canonical)
  const leads = linked.filter(target => !broad.some(path => isWithin(path, target)))
  const origin = input.origin ? [input.origin] : []
  return unique([...forms, ...[...leads, input.dataDir, ...(input.dataPlaces ?? []), ...data, ...origin].flatMap(bothForms)])
}

/**
 * What the command may not read (the policy's `hidden`), `tree` being where
 * its work is: the hidden paths, and on Linux /dev (a disk read raw holds
 * every secret; without the namespaces /dev is the user's), of which DEVICES
 * are granted. Not masked: the namespaces give the command a /dev of its own
 * (native-helpers/devices.c).
 */
export function unreadable(input: HiddenInput, hidden = hiddenPaths(input)): string[] {
  return input.platform === 'linux' ? [...hidden, '/dev'] : hidden
}

/** Where the user's session listens: its runtime directory (as root every user's), D-Bus, Docker and Podman, GNU screen. */
function sessionSockets(home: string): string[] {
  const uid = process.getuid?.() ?? 0
  return [
    uid === 0 ? '/run/user' : `/run/user/${uid}`,
    '/run/dbus',
    '/var/run/dbus',
    '/run/docker.sock',
    '/var/run/docker.sock',
    '/run/podman/podman.sock',
    '/run/screen',
    '/var/run/screen',
    join(home, '.screen'),
  ]
}

/** Where the search for the session's other sockets looks (sockets.ts). */
const SOCKET_ROOTS = ['/run', '/var/run']

/**
 * Whether a temporary directory or cache can be the command's own (on
 * Linux the workspace's is put over it): not `/`, and holding neither
 * hmm's data directory (covering it would hide the tree) nor the home
 * directory (TMPDIR=$HOME). One that cannot is not writable at all, in no
 * mode and on no platform: written in place it would hand the command what
 * lies beside the data directory (the origin) or the whole home.
 */
function ownable(input: Pick<PolicyInput, 'dataDir' | 'home'>): (path: string) => boolean {
  const [data, home] = [canonical(input.dataDir), canonical(input.home)]
  return path => path !== '/' && !isWithin(data, path) && !isWithin(home, path)
}

/**
 * What the namespaces cover: the temporary directories and caches that can
 * be the command's own, and with nothing (Landlock does not stop connect()
 * to a socket by its path, so hiding is not enough) the session's places,
 * each hidden path that exists (Landlock still hides it, and what is made
 * there later), and each socket found in /run and the home directory (of
 * a composed home, in what it keeps). Never a hidden path that holds the
 * tree (and so the command's working directory) or a path it may write;
 * never a socket in the tree, its temporary directories or a path the user
 * lets it write: those it may use.
 */
function isolationFor(
  input: PolicyInput,
  tree: string,
  temp: string[],
  caches: string[],
  writable: string[],
  hidden: string[],
  home: ComposedHome | undefined,
): Isolation {
  const data = canonical(input.dataDir)
  const session = unique(sessionSockets(input.home).map(canonical))
  const secrets = hidden
    .filter(path => !isWithin(path, data) && lstatSync(path, {throwIfNoEntry: false}))
    .filter(path => ![tree, ...writable].some(place => isWithin(place, path)))
  // Not searched: what is covered whole, the secrets (a browser profile is big), the overlaid caches (a socket in a
  // lower layer cannot be connected to through the overlay).
  const granted = [tree, ...temp, ...input.extraWritable.map(canonical)]
  // Of a composed home, the command has only what it keeps: the rest of the home, with whatever listens there, is not
  // in its mount namespace, and a home holds trees of any size (searching them cost a run 30 ms on a home of 25,000).
  const homePlaces = home ? home.keep.map(entry => entry.path) : [input.home]
  const found = socketsWithin([...SOCKET_ROOTS, ...homePlaces], [data, ...session, ...hidden, ...caches]).filter(
    socket => !granted.some(place => isWithin(socket, place)),
  )
  return {
    temp,
    caches,
    masked: unique([...session, ...secrets, ...found]),
    data,
    ...(home ? {home} : {}),
    ...(input.agent === undefined ? {} : {agent: input.agent}),
  }
}

/**
 * What is shared of Bazel's output user roots (~/.cache/bazel/_bazel_<user>):
 * its install base and repository cache. The rest are output bases, each
 * with its server's request cookie and port (a gRPC server on the loopback
 * that builds and runs tests as the user, outside: `--run_under`) and
 * another project's build outputs (attacker's review 24, L2). A build in
 * the sandbox gets an output base of its own in the layer: its tree's path
 * is not the origin's.
 */
const BAZEL_SHARED = ['install', 'cache']

/**
 * The entries of the user's ~/.cache that SHARED_CACHES does not name, and
 * Bazel's output bases, to be whited out in its layer: only where it is one
 * and the home is composed (home = "visible" shows it whole), never one
 * holding or inside a place asked for by name (-w, an agent's layer,
 * `show`, `unhide`).
 */
function unsharedCaches(input: PolicyInput, caches: string[], asked: string[]): string[] {
  const cache = canonical(join(input.home, '.cache'))
  if (input.platform !== 'linux' || !input.namespaces || !input.compose || !caches.includes(cache)) return []
  const bazel = join(cache, 'bazel')
  const outputBases = namesIn(bazel)
    .filter(name => name.startsWith('_bazel_'))
    .flatMap(root => namesIn(join(bazel, root)).flatMap(name => (BAZEL_SHARED.includes(name) ? [] : [join(bazel, root, name)])))
  return [
    ...namesIn(cache)
      .filter(name => !SHARED_CACHES.includes(name))
      .map(name => join(cache, name)),
    ...outputBases,
  ].filter(path => !asked.some(place => isWithin(place, path) || isWithin(path, place)))
}

/** What of a policy says where the command may write: whether it could have left a program there (platform/programs.ts). */
export type WritePlaces = Pick<SandboxPolicy, 'writable' | 'readOnly' | 'plainOnly' | 'devices'>

/** What the write places are made of (buildPolicy takes the parts too). */
function writeReach(input: Pick<PolicyInput, 'home' | 'dataDir' | 'extraWritable' | 'tmpdir' | 'platform' | 'namespaces'>) {
  const home = (rel: string) => join(input.home, rel)
  const extra = input.extraWritable.map(canonical)
  const own = ownable(input)
  const userTmpdir = input.tmpdir && isAbsolute(input.tmpdir) ? canonical(input.tmpdir) : undefined
  const temp = unique([...TEMP_DIRS[input.platform], ...(userTmpdir ? [userTmpdir] : [])].map(canonical)).filter(own)
  const overlaid = input.platform === 'linux' && input.namespaces === true
  const caches = unique([...CACHES[input.platform], ...(overlaid ? LAYERED_ONLY : [])].map(home).map(canonical)).filter(own)
  // Written in place, the caches' program parts and rendezvous, but those a -w path names or lies inside: asked for by
  // name. Under the namespaces every writable cache is an overlay, and they are written there as the rest.
  const inPlace = (rels: string[]) => unique((overlaid ? [] : rels.map(home)).map(canonical)).filter(path => !extra.some(dir => isWithin(dir, path)))
  const darwin = input.platform === 'darwin'
  const places: WritePlaces = {
    writable: unique([...temp, ...caches, ...extra]),
    readOnly: inPlace(darwin ? [...CACHE_PROGRAMS, ...CACHE_RENDEZVOUS] : CACHE_PROGRAMS),
    plainOnly: darwin ? [] : inPlace(CACHE_RENDEZVOUS),
    devices: DEVICES[input.platform],
  }
  return {places, home, extra, own, userTmpdir, temp, overlaid, caches}
}

/** buildPolicy's write places alone: none of the searches for what it hides. */
export function writePlaces(input: Pick<PolicyInput, 'home' | 'dataDir' | 'extraWritable' | 'tmpdir' | 'platform' | 'namespaces'>): WritePlaces {
  return writeReach(input).places
}

export function buildPolicy(input: PolicyInput): SandboxPolicy {
  const {places, home, extra, own, userTmpdir, temp, overlaid, caches} = writeReach(input)
  const layers = unique((input.layers ?? []).map(canonical)).filter(own)
  // The user's $TMPDIR cannot be the command's own: it gets the first that can (/tmp). macOS has no namespace to
  // give it one over the user's: it gets the workspace's own, where alone of the temp dirs its sockets may be.
  const tree = canonical(input.tree)
  const tmpdir = input.platform === 'darwin' ? ownTmpOf(tree) : userTmpdir && !own(userTmpdir) ? temp[0] : undefined
  const {writable} = places
  // Those the user has (whited out, each would leave its empty directory in the layer).
  const given = [...(input.unhide ?? []), ...(input.compose?.show ?? [])]
  const cacheSecrets = overlaid ? CACHE_SECRETS.map(home).filter(path => existsSync(path) && !given.includes(path)) : []
  const hidden = [...hiddenPaths(input), ...cacheSecrets, ...unsharedCaches(input, caches, [...extra, ...layers, ...given])]
  const layered = [...caches, ...layers]
  // Without the namespaces the caches are written in place.
  const inLayers = overlaid ? layered : []
  const composed =
    input.compose && composeHome({home: input.home, layered: inLayers, writable: writable.filter(path => !inLayers.includes(path)), ...input.compose})
  return {
    tree,
    readable: ['/'],
    ...places,
    hidden: unreadable(input, hidden),
    ...(input.platform === 'linux' ? {isolation: isolationFor(input, tree, temp, layered, writable, hidden, overlaid ? composed : undefined)} : {}),
    ...(composed && !overlaid ? {home: composed} : {}),
    ...(input.network ? {network: input.network} : {}),
    ...(tmpdir ? {tmpdir} : {}),
  }
}

/**
 * The policy with files bound over others in the namespaces (an agent's
 * login and state, app/agent-places.ts): they lie in the workspace's
 * directory, known only once it is made.
 */
export function withBinds(policy: SandboxPolicy, binds: Bind[]): SandboxPolicy {
  return policy.isolation && binds.length > 0 ? {...policy, isolation: {...policy.isolation, binds}} : policy
}

/** The writable path that holds `path`, if any (the tree aside: it is new, in hmm's data directory). */
export function writableHolding(policy: Pick<SandboxPolicy, 'writable' | 'devices'>, path: string): string | undefined {
  return [...policy.writable, ...policy.devices].find(dir => isWithin(path, dir))
}
