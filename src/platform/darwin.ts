// The policy as a Seatbelt profile for macOS's /usr/bin/sandbox-exec. Pure:
// building the argv is separate from running it, so `hmm sandbox` shows
// exactly what `hmm run` does.
//
// The profile text is constant but for the number of paths of each kind:
// every path reaches Seatbelt as a parameter (`-DHIDDEN_0=/Users/me/.ssh`),
// read in the profile with `(param "HIDDEN_0")`. No path is ever parsed as
// SBPL, whatever bytes it holds (quotes, parentheses, `;`, newlines).
//
// Two facts of Seatbelt shape the profile:
// - Where rules overlap, the later one wins. The order of the sections is the
//   policy: writable paths re-allowed after writing is denied, hidden paths
//   denied after that, the workspace tree (which lies inside the hidden data
//   directory) allowed last.
// - It matches paths, not files: the path a file is reached through, with
//   symbolic links resolved (/tmp is /private/tmp). So a new name for a file
//   (a hard link, a renamed parent directory) could carry it out from under a
//   rule; the profile closes those doors one by one.
//
// What Seatbelt cannot do, or does differently from Landlock on Linux:
// - There is no no_new_privs. Seatbelt itself refuses to run set-user-ID and
//   set-group-ID programs in any sandboxed process (`forbidden-exec-sugid`);
//   the profile adds that no such bit may be set on any file.
// - Listing a hidden directory is refused as well as reading its files (on
//   Linux names stay listable), and so is stat(2) of what it holds.
// - A hard link can be made only to a file the command may write. Rules
//   that go by paths cannot tell two names of one file apart: a hard link to
//   a secret made before the command started, outside the hidden paths,
//   reads it through that other name.
// - `(allow default)` leaves Mach and XPC services reachable: a program can
//   ask a service outside the sandbox (launchd, another application) to act
//   for it. The file rules bind this process tree, not those services.
// - No namespaces: /tmp is the user's (sockets there are refused, files
//   are not), and the command's processes are not held in a PID namespace,
//   so one it leaves behind outlives `hmm stop` if it leaves the lock.
// - No overlay over the tool caches: their program parts are read-only
//   instead (CACHE_PROGRAMS), and the rest of what the command writes there
//   stays after the workspace is gone.
// - TIOCSTI is refused only from macOS 13 on, where Seatbelt can name it.
// - No network namespace: with --net the command keeps localhost, the
//   machine's own (none: every port of it; HOST,...: hmm's proxy's port),
//   and everything else is refused by address.
import {release as osRelease} from 'node:os'
import {posix} from 'node:path'
import {isWithin, unique} from '../sandbox/paths.js'
import type {SandboxPolicy} from '../sandbox/policy.js'

/** Only this sandbox-exec is run, never one found on PATH. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec'

/**
 * macOS's top-level symbolic links into /private. Seatbelt sees resolved
 * paths, and `canonical()` resolves them only on a Mac; this lets the
 * rendering come out the same from any machine.
 */
const PRIVATE_LINKS = ['/tmp', '/var', '/etc']

/** A canonical path as macOS resolves it: /tmp/x is /private/tmp/x. */
export function darwinPath(path: string): string {
  for (const link of PRIVATE_LINKS) if (path === link || path.startsWith(`${link}/`)) return `/private${path}`
  return path
}

/** The policy with its paths as macOS resolves them (duplicates dropped: /tmp and /private/tmp are one). */
export function darwinPolicy(policy: SandboxPolicy): SandboxPolicy {
  const map = (paths: string[]) => unique(paths.map(darwinPath))
  return {
    tree: darwinPath(policy.tree),
    readable: map(policy.readable),
    writable: map(policy.writable),
    readOnly: map(policy.readOnly),
    // None on macOS: buildPolicy makes those places read-only there.
    plainOnly: [],
    devices: map(policy.devices),
    hidden: map(policy.hidden),
    ...(policy.home
      ? {home: {...policy.home, dir: darwinPath(policy.home.dir), keep: policy.home.keep.map(entry => ({...entry, path: darwinPath(entry.path)}))}}
      : {}),
    ...(policy.network ? {network: policy.network} : {}),
    ...(policy.tmpdir ? {tmpdir: darwinPath(policy.tmpdir)} : {}),
  }
}

/** How many paths of each kind the profile names: all its text depends on. */
export interface SeatbeltShape {
  writable: number
  /** The caches' program parts inside writable paths. */
  readOnly: number
  /**
   * Whether the policy gives the command a temp directory of its own (its
   * $TMPDIR, in hmm's hidden data directory beside the tree): everything
   * there, as in the tree, and the one place besides the tree where unix
   * sockets may be reached. Not every per-user temp directory
   * (/private/var/folders): editors keep their control sockets there
   * (Emacs's server, Neovim's, VS Code's IPC), and whoever reaches one runs
   * code outside. Not /tmp: tmux's sockets and launchd's ssh-agent socket
   * (SSH_AUTH_SOCK) are there.
   */
  ownTmp: boolean
  /** The system's own sockets every program may reach. */
  systemSockets: number
  /** Whether this macOS knows `(ioctl-command TIOCSTI)` (13 and later). */
  tiocsti: boolean
  devices: number
  /** Whether the home is composed (policy.ts SandboxPolicy.home), and how many places of it are kept. */
  home?: {kept: number}
  hidden: number
  /** Read though a hidden path holds them (policy.ts SandboxPolicy.readable, but `/`): the cleaned copies. */
  readable?: number
  /** Directories above hidden paths: they may not be renamed. */
  hiddenAncestors: number
  /** Directories between a hidden path and the tree inside it: they may be stat'ed. */
  treeAncestors: number
  /** --net: none but localhost, or hmm's proxy's localhost port only (undefined: not known yet, rendered PROXY_PORT). */
  network?: {kind: 'none'} | {kind: 'proxy'; port: number | undefined}
}

export interface SeatbeltParameter {
  name: string
  value: string
}

export interface Seatbelt {
  profile: string
  parameters: SeatbeltParameter[]
}

/** The system's sockets every program may use: the name resolver's and the log's. They act for no user. */
const SYSTEM_SOCKETS = ['/private/var/run/mDNSResponder', '/private/var/run/syslog']
/** With --net, names are not looked up: the resolver's socket is left out. */
const SYSTEM_SOCKETS_NO_DNS = ['/private/var/run/syslog']

/**
 * Whether this Mac's Seatbelt knows `(ioctl-command TIOCSTI)`: from macOS
 * 13 (Darwin 22) on; older ones refuse the whole profile. Rendered for
 * another platform, a Mac recent enough is assumed.
 */
export function seatbeltKnowsTiocsti(platform: NodeJS.Platform = process.platform, release = osRelease()): boolean {
  return platform !== 'darwin' || Number.parseInt(release, 10) >= 22
}

/** The directories above a path, top first, `/` left out. */
function ancestors(path: string): string[] {
  const above: string[] = []
  for (let dir = posix.dirname(path); dir !== '/' && dir !== '.'; dir = posix.dirname(dir)) above.unshift(dir)
  return above
}

function filters(kind: 'subpath' | 'literal', prefix: string, count: number): string[] {
  return Array.from({length: count}, (_, index) => `  (${kind} (param "${prefix}_${index}"))`)
}

/** One rule over a list of filters, or nothing when the list is empty: a rule without filters would cover every path. */
function rule(comment: string[], head: string, lines: string[]): string[] {
  if (lines.length === 0) return []
  return [...comment.map(line => `; ${line}`), `(${head}`, ...lines.slice(0, -1), `${lines.at(-1)})`]
}

/**
 * The network with --net. macOS has no network namespace, so "loopback
 * only" is the machine's own localhost; with the proxy, only its port. The
 * port is the one number pasted into the profile (a number, never a path).
 */
function networkSection(network: SeatbeltShape['network']): string[] {
  if (!network) return []
  const outbound = network.kind === 'none' ? 'localhost:*' : `localhost:${network.port ?? 'PROXY_PORT'}`
  return [
    network.kind === 'none'
      ? "; --net none: no network but localhost (the machine's own: macOS has no"
      : "; --net HOST,...: no network but hmm's proxy on its localhost port, which",
    network.kind === 'none' ? '; network namespace).' : '; passes on only HTTP(S) to the hosts given.',
    '(deny network-outbound (remote ip "*:*"))',
    `(allow network-outbound (remote ip "${outbound}"))`,
    '; Its own servers listen on localhost only.',
    '(deny network-bind network-inbound (local ip "*:*"))',
    '(allow network-bind network-inbound (local ip "localhost:*"))',
    "; Names are not looked up (a lookup carries data out): the resolver's",
    '; socket is not among the system sockets above, nor is its service here.',
    '(deny mach-lookup (global-name "com.apple.dnssd.service"))',
  ]
}

/** The profile text. It depends only on the shape, never on a path. */
export function seatbeltProfile(shape: SeatbeltShape): string {
  const sections: string[][] = [
    ['(version 1)'],
    [
      '; hmm run: the Seatbelt form of the policy Linux enforces with Landlock.',
      '; Every path is a parameter given to sandbox-exec with -D, never text here.',
      '; Where rules overlap the later one wins, so the order below is the policy.',
    ],
    ['; Everything not denied below is allowed: reading the system, running', '; programs, the network.', '(allow default)'],
    [
      '; Writing is denied everywhere, and so is making hard links: Seatbelt',
      '; judges a file by the path it is reached through, so a new name in a',
      '; writable place would make a read-only file writable. Only files that',
      '; may be written anyway may be linked.',
      '(deny file-write* file-link)',
    ],
    rule(
      ['...but in the temp directories (/tmp, /private/var/folders, $TMPDIR), the', 'tool caches and the paths given with -w: builds and tools write there.'],
      'allow file-write* file-link',
      filters('subpath', 'WRITABLE', shape.writable),
    ),
    rule(
      [
        'Where the caches keep programs that run outside the sandbox later, or',
        'name them (~/.cargo/bin, ~/.cargo/env, ~/.cargo/config.toml, ...): not',
        'written, not linked away, after the writable paths they lie in. macOS',
        "has no overlay to keep the command's cache writes in its workspace.",
      ],
      'deny file-write* file-link',
      filters('subpath', 'READ_ONLY', shape.readOnly),
    ),
    rule(['Devices: terminals and /dev/null are written by almost every program.'], 'allow file-write*', filters('subpath', 'DEVICE', shape.devices)),
    shape.home
      ? [
          '; The composed home: nothing of it is read (listed, run) but the places',
          '; work needs (toolchains, start-up files, caches, `show`). Its names',
          '; and metadata stay, as paths are looked up through it.',
          '(deny file-read-data file-read-xattr process-exec',
          '  (subpath (param "COMPOSED_HOME")))',
        ]
      : [],
    rule(
      ['...but its kept places; the secrets inside them are denied below.'],
      'allow file-read-data file-read-xattr process-exec',
      filters('subpath', 'HOME_KEPT', shape.home?.kept ?? 0),
    ),
    rule(
      [
        "Secrets (~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh) and hmm's data directory",
        "(other workspaces, the registry, this workspace's own bookkeeping): not",
        'read, not listed, not written, not linked or cloned elsewhere, not run.',
        'After the writable paths, so a hidden path inside one (a data directory',
        'under /tmp) stays hidden. The path itself too, even before it exists.',
      ],
      'deny file-read* file-write* file-link file-clone process-exec',
      Array.from({length: shape.hidden}, (_, index) => `  (literal (param "HIDDEN_${index}")) (subpath (param "HIDDEN_${index}"))`),
    ),
    rule(
      ['Renaming a directory above a hidden path would move what it hides to a', 'path no rule names: those directories cannot be renamed or removed.'],
      'deny file-write-unlink',
      filters('literal', 'HIDDEN_ANCESTOR', shape.hiddenAncestors),
    ),
    rule(
      ["Files read though a hidden path holds them: copies of the user's config", 'files without their credentials, which variables name to their tools.'],
      'allow file-read*',
      filters('subpath', 'READABLE', shape.readable ?? 0),
    ),
    rule(
      [
        'The tree lies inside the hidden data directory, and looking a path up',
        'needs the metadata of each directory on the way: the directories between',
        'the two may be looked at (stat), not listed, read or written.',
      ],
      'allow file-read-metadata',
      filters('literal', 'TREE_ANCESTOR', shape.treeAncestors),
    ),
    shape.ownTmp
      ? [
          '; The workspace tree and its own temp directory ($TMPDIR): everything. Last',
          '; of the paths, so they win over the hidden data directory they lie in.',
          '(allow file-read* file-write* file-link file-clone process-exec',
          '  (subpath (param "TREE"))',
          '  (subpath (param "TMPDIR")))',
        ]
      : [
          '; The workspace tree: everything. Last of the paths, so it wins over the',
          '; hidden data directory it lies in.',
          '(allow file-read* file-write* file-link file-clone process-exec',
          '  (subpath (param "TREE")))',
        ],
    [
      '; But its root stays where hmm made it: it cannot be renamed or removed',
      "; (nor can it under Landlock, whose tree's parent is not writable).",
      '(deny file-write-unlink',
      '  (literal (param "TREE")))',
    ],
    [
      "; The user's other programs: no unix socket outside the tree and its own",
      '; temp directory may be connected to (tmux, screen, ssh-agent and',
      "; launchd's sockets in /tmp, gpg-agent, Docker, editors' servers in the",
      "; per-user temp directories, a session's others).",
      '(deny network-outbound (remote unix-socket))',
    ],
    rule(
      [
        '...but its own: sockets in the tree and in its own temp directory',
        "($TMPDIR; not /tmp, nor the per-user ones), and the system's name",
        'resolver and log, which every program uses.',
      ],
      'allow network-outbound',
      [
        '  (remote unix-socket (subpath (param "TREE")))',
        ...(shape.ownTmp ? ['  (remote unix-socket (subpath (param "TMPDIR")))'] : []),
        ...Array.from({length: shape.systemSockets}, (_, index) => `  (remote unix-socket (path-literal (param "SYSTEM_SOCKET_${index}")))`),
      ],
    ),
    networkSection(shape.network),
    shape.tiocsti
      ? [
          "; No typing into the terminal: TIOCSTI would push input that the user's",
          '; shell reads once hmm exits. Other terminal ioctls stay allowed.',
          '(deny file-ioctl (ioctl-command TIOCSTI))',
        ]
      : [],
    [
      '; No privileges to gain: no set-user-ID or set-group-ID bit may be set on',
      '; any file. Seatbelt has no no_new_privs, but refuses by itself to run the',
      '; set-user-ID programs already there (forbidden-exec-sugid).',
      '(deny file-write-setugid)',
    ],
  ]
  return (
    sections
      .filter(section => section.length > 0)
      .map(section => section.join('\n'))
      .join('\n\n') + '\n'
  )
}

/**
 * The policy as Seatbelt needs it: the profile and the value of each
 * parameter it names, paths resolved as macOS resolves them.
 */
export function seatbelt(policy: SandboxPolicy, options: {tiocsti?: boolean; proxyPort?: number} = {}): Seatbelt {
  const tiocsti = options.tiocsti ?? seatbeltKnowsTiocsti()
  const darwin = darwinPolicy(policy)
  // The profile lets everything be read but the hidden paths; a policy that
  // limited reading would need a rule this rendering does not have.
  if (!darwin.readable.includes('/')) throw new Error(`the Seatbelt profile cannot limit reading to ${darwin.readable.join(', ')}`)
  const readable = darwin.readable.filter(path => path !== '/')
  const hiddenAncestors = unique(darwin.hidden.flatMap(ancestors))
  const treeAncestors = unique([darwin.tree, ...(darwin.tmpdir ? [darwin.tmpdir] : []), ...readable].flatMap(ancestors)).filter(dir =>
    darwin.hidden.some(hidden => isWithin(dir, hidden)),
  )
  const named = (prefix: string, values: string[]) => values.map((value, index) => ({name: `${prefix}_${index}`, value}))
  const systemSockets = policy.network ? SYSTEM_SOCKETS_NO_DNS : SYSTEM_SOCKETS
  const parameters = [
    {name: 'TREE', value: darwin.tree},
    ...(darwin.tmpdir ? [{name: 'TMPDIR', value: darwin.tmpdir}] : []),
    ...named('WRITABLE', darwin.writable),
    ...named('READ_ONLY', darwin.readOnly),
    ...named('DEVICE', darwin.devices),
    ...(darwin.home
      ? [
          {name: 'COMPOSED_HOME', value: darwin.home.dir},
          ...named(
            'HOME_KEPT',
            darwin.home.keep.map(entry => entry.path),
          ),
        ]
      : []),
    ...named('HIDDEN', darwin.hidden),
    ...named('READABLE', readable),
    ...named('HIDDEN_ANCESTOR', hiddenAncestors),
    ...named('TREE_ANCESTOR', treeAncestors),
    ...named('SYSTEM_SOCKET', systemSockets),
  ]
  const profile = seatbeltProfile({
    writable: darwin.writable.length,
    readOnly: darwin.readOnly.length,
    ownTmp: darwin.tmpdir !== undefined,
    systemSockets: systemSockets.length,
    tiocsti,
    devices: darwin.devices.length,
    ...(darwin.home ? {home: {kept: darwin.home.keep.length}} : {}),
    hidden: darwin.hidden.length,
    readable: readable.length,
    hiddenAncestors: hiddenAncestors.length,
    treeAncestors: treeAncestors.length,
    ...(policy.network ? {network: policy.network.kind === 'none' ? {kind: 'none'} : {kind: 'proxy', port: options.proxyPort}} : {}),
  })
  return {profile, parameters}
}

/** sandbox-exec's arguments before the command: the profile and its parameters. */
export function seatbeltArgs(policy: SandboxPolicy, proxyPort?: number): string[] {
  const {profile, parameters} = seatbelt(policy, {proxyPort})
  return ['-p', profile, ...parameters.map(({name, value}) => `-D${name}=${value}`)]
}

/**
 * The whole argv that runs a command under the policy, without a shell:
 * `/usr/bin/sandbox-exec -p PROFILE -DNAME=VALUE... -- COMMAND...`. On macOS
 * this is what follows the helper's `--`.
 */
export function seatbeltArgv(policy: SandboxPolicy, command: string[], proxyPort?: number): string[] {
  return [SANDBOX_EXEC, ...seatbeltArgs(policy, proxyPort), '--', ...command]
}
