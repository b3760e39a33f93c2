// `hmm sandbox`: the policy `hmm run` would apply here, rendered for audit.
import {existsSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'
import {debugEnabled, HmmError} from '../ui/errors.js'
import {dataDir, dataPlaces, defaultPlatform, runsOn} from '../platform/index.js'
import {workingOrigin} from '../workspaces/context.js'
import {treePath} from '../workspaces/workspace.js'
import {loadConfig, networkOf, settingsFor, type Isolation} from '../sandbox/config.js'
import {removedVariables} from '../sandbox/env.js'
import {sandboxLayers} from '../native/helper.js'
import {SANDBOX_EXEC, seatbelt} from '../platform/darwin.js'
import {optOut, policyFor, userTmpdir} from '../platform/confine.js'
import {usernsRefusal} from '../platform/userns-refusal.js'
import {agentPlaces} from './agent-places.js'
import {launchArgv} from '../platform/launch.js'
import {canonical} from '../sandbox/paths.js'
import type {Network, Platform, SandboxPolicy} from '../sandbox/policy.js'
import {parseRules} from '../net/hosts.js'
import {INSIDE_PORT} from './network.js'
import {checkNoLinkOnTheWay, checkNotDataDirectory, checkNotInOwnTemp} from './grants.js'
import {cleanedConfigs, composeInput, describeProfile, withNetFlag} from './session.js'
import {describeHome} from '../sandbox/home.js'
import {COPY_VARIABLES} from './unmounted-copies.js'
import {shellWord, tildify} from '../ui/format.js'

/** The namespaces' line where this system refuses them: why, and how to allow them or opt out. */
function namespacesRefused(refusal: string): string {
  const {cause, fix} = usernsRefusal(refusal)
  return `  namespaces: refused by this system (${cause}): hmm run refuses; ${fix}; or ${optOut()}`
}

/** Which layers `hmm run` would apply here: on Linux as this system gives them (asked of the helper), never more than are in force. */
/** Run as root: whose files the command is root of (native-helpers/ids.c). */
function idsLine(ids: string | null | undefined, visible: boolean): string[] {
  if (process.getuid?.() !== 0) return []
  if (ids === null && !visible)
    return [
      "  ids: run as root, the command is root of its own files only (its tree, home, caches, /tmp, -w places: idmapped mounts); root's other files are closed to it",
    ]
  const why = visible ? 'home = "visible"' : `no idmapped mount here: ${ids ?? 'the helper did not say'}`
  return [`  ids: run as root, the command is root over every file it may read (${why})`]
}

function layerLines(platform: Platform, isolation: Isolation, network: Network | undefined, ownPlaces: string[], visible: boolean): string[] {
  if (platform === 'darwin') {
    return [
      '  seatbelt: files; no unix socket outside the tree and the per-user temp directories; TIOCSTI refused (macOS 13 and later)',
      '  not on macOS: namespaces (no PID namespace: processes left running are not held; /tmp is shared), an overlay over the caches (their program parts are read-only instead)',
      isolation === 'full' ? `  hmm run refuses on macOS until you opt out: ${optOut()}` : '  opted out (isolation = "landlock-only"): Seatbelt alone',
      ...(network
        ? [
            network.kind === 'none'
              ? "  network (Seatbelt): only localhost, which on macOS is the machine's own; no name lookups"
              : "  network (Seatbelt): only hmm's proxy on localhost:PROXY_PORT (a free port, chosen when the command starts); no name lookups",
          ]
        : []),
    ]
  }
  if (!runsOn('linux')) return ['  (asked of the kernel when run on Linux)']
  const layers = sandboxLayers(isolation === 'full' && !visible && process.getuid?.() === 0 ? ownPlaces : [])
  const namespaces =
    isolation === 'landlock-only'
      ? '  namespaces: off (isolation = "landlock-only"): /tmp, /dev/shm and the sockets of the user\'s session are shared; every process of the machine and its command line (/proc/PID/cmdline: a password typed as an argument) is in sight; the caches are written in place, but for their program parts; modes, times and attributes of the user\'s files outside may be changed (Landlock does not mediate chmod, chown, utimes, setxattr)'
      : layers.namespaces
        ? namespacesRefused(layers.namespaces)
        : `  namespaces: user, mount, PID${network ? ', IPC and network' : ' and IPC'}; every mount read-only but the places it may write; a /run of its own`
  const scoped = layers.landlock >= 6 ? 'signals and abstract unix sockets scoped' : 'signals and abstract unix sockets not scoped (needs ABI 6, Linux 6.12)'
  return [
    namespaces,
    ...(isolation === 'full' ? idsLine(layers.ids, visible) : []),
    `  landlock: ABI ${layers.landlock}: files; ${scoped}`,
    layers.seccomp
      ? `  seccomp: refused by this system (${layers.seccomp}): hmm run refuses`
      : `  seccomp: ioctl TIOCSTI and TIOCLINUX refused; set-user-ID and set-group-ID modes refused; other processes' limits and priorities refused${network ? '; sockets but unix, IPv4 and IPv6 ones, raw sockets and io_uring refused' : ''}`,
  ]
}

/** What the command's mount namespace covers with nothing (Linux, namespaces on): no socket there can be reached. */
function coveredLines(policy: SandboxPolicy, isolation: Isolation): string[] {
  if (!policy.isolation || isolation !== 'full') return []
  return [
    'covered in its mount namespace (no socket there can be reached; sockets found in /run and ~ as the command starts):',
    ...policy.isolation.masked.map(path => `  ${path}`),
    `  ${policy.isolation.data} (but the workspace's own directory)`,
  ]
}

/** The network in force, in a line. */
function networkLine(platform: Platform, network: Network | undefined, isolation: Isolation): string {
  if (!network) return "network: the user's; --net confines it"
  if (platform === 'linux' && isolation === 'landlock-only') return 'network: --net needs the namespaces, and isolation = "landlock-only": hmm run refuses'
  if (network.kind === 'none') {
    return platform === 'darwin'
      ? 'network: none but localhost (Seatbelt); name lookups fail'
      : 'network: none: a network namespace of its own, only its loopback up; name lookups fail'
  }
  const rules = parseRules(network.hosts).map(rule => `${rule.text} (port${rule.ports.length > 1 ? 's' : ''} ${rule.ports.join(', ')})`)
  return `network: only HTTP and HTTPS through hmm's proxy, to ${rules.join(', ') || 'no host'}; everything else fails, name lookups too`
}

/**
 * What may be read besides: everything but the hidden paths, and of the
 * home, when composed, only what it holds; without the namespaces by
 * rules, and how that differs.
 */
function homeLines(policy: SandboxPolicy, platform: Platform): string[] {
  const home = policy.isolation?.home ?? policy.home
  if (!home) return ['may read: everything else']
  const rules =
    platform === 'darwin'
      ? 'Seatbelt rules: the rest of ~ is there but unreadable'
      : 'Landlock rules: the rest of ~ is there but unreadable, EACCES, its names listable'
  return [
    `may read: everything else outside ${tildify(home.dir)}`,
    `home (composed${policy.isolation?.home ? ': nothing else of ~ is there' : ` by ${rules}`}; home = "visible" in the config file shows the rest):`,
    ...describeHome(home).map(line => `  ${line}`),
    ...(policy.isolation?.home
      ? ["  and, once the workspace is made, its tree, and git's and npm's settings as copies without their credentials"]
      : [
          '  and, once the workspace is made, its tree',
          `  unlike with the namespaces: the rest of ~ is unreadable rather than absent; the caches are written in place; a file with a credential in it (a config, a start-up file) is unreadable, and git, npm and pip read copies without them through ${COPY_VARIABLES.join(', ')}`,
        ]),
  ]
}

/** `platform`: render as hmm run would there (default: this one). */
export function describeSandbox(options: {platform?: Platform; writable: string[]; net?: string; command: string[]}): string {
  const platform = options.platform ?? defaultPlatform()
  for (const path of options.writable) if (!existsSync(path)) throw new HmmError(`${path} does not exist`)
  const settings = withNetFlag(settingsFor(loadConfig(), options.command), options.net)
  const network = networkOf(settings)
  const origin = workingOrigin()
  const data = dataDir(process.env, platform)
  const tree = treePath(data, '<id>', origin)
  const namespaces = settings.isolation === 'full'
  const places = agentPlaces(settings, platform, namespaces)
  checkNotDataDirectory(dataPlaces(process.env, platform), {given: options.writable, configured: settings.write})
  const asked = [...options.writable, ...places.writable]
  // On macOS /tmp, /var and /etc resolve into /private: the paths are shown as a Mac sees them.
  const policy = policyFor(platform, {
    tree,
    dataDir: data,
    hide: settings.hide,
    origin,
    unhide: platform === 'linux' && namespaces ? [...settings.unhide, ...cleanedConfigs(settings)] : settings.unhide,
    network,
    namespaces,
    ...places,
    writable: asked,
    ...(settings.home === 'composed' ? {compose: composeInput(settings, options.command)} : {}),
  })
  checkNoLinkOnTheWay(policy, namespaces, {write: asked, tmpdir: userTmpdir()})
  if (namespaces)
    checkNotInOwnTemp(
      policy,
      asked.map(path => canonical(path)),
    )
  const agent = settings.agent ? describeProfile(settings.agent, places.layers !== undefined) : 'none'
  const layers = policy.isolation?.caches.filter(path => settings.agent?.layers.includes(path)) ?? []
  const lines = [
    `origin: ${origin}`,
    `agent profile: ${agent}`,
    `workspace tree: ${policy.tree}`,
    'may write:',
    ...[policy.tree, ...policy.writable, ...policy.devices].map(path => `  ${path}`),
    'may not read:',
    ...policy.hidden.map(path => `  ${path}`),
    ...homeLines(policy, platform),
    `environment: removes ${removedVariables(process.env, settings.env).join(' ') || 'nothing set now'} (credentials, sockets of this session, the config file's env.remove)`,
    ...(policy.readOnly.length > 0 ? ['may not write (inside the writable paths):', ...policy.readOnly.map(path => `  ${path}`)] : []),
    ...(policy.plainOnly.length > 0
      ? [
          'may make only plain files and directories (inside the writable paths; new entries of their directories too):',
          ...policy.plainOnly.map(path => `  ${path}`),
        ]
      : []),
    ...coveredLines(policy, settings.isolation),
    ...(layers.length > 0 ? ["the agent's, kept with the workspace (its login written through):", ...layers.map(path => `  ${path}`)] : []),
    networkLine(platform, network, settings.isolation),
    'layers:',
    ...layerLines(platform, settings.isolation, network, [homedir(), data, ...policy.writable].filter(existsSync), settings.home === 'visible'),
  ]
  if (platform === 'linux') {
    const argv = launchArgv({
      platform,
      policy,
      workspace: settings.isolation === 'full' ? join(data, '<id>') : undefined,
      lock: join(data, '<id>', 'lock'),
      cwd: policy.tree,
      command: ['COMMAND...'],
      ...(network?.kind === 'proxy' ? {proxy: {port: INSIDE_PORT, socket: 'hmm-proxy-<id>-<random>', debug: debugEnabled()}} : {}),
    })
    lines.push('enforced by Landlock, applied by the helper just before exec:', `  hmm-helper ${argv.map(shellWord).join(' ')}`)
  } else {
    const {profile, parameters} = seatbelt(policy)
    lines.push(
      'enforced by Seatbelt: sandbox-exec runs the command under PROFILE, with one -D per parameter:',
      `  ${SANDBOX_EXEC} -p PROFILE -DNAME=VALUE... -- COMMAND...`,
      'parameters (NAME=VALUE):',
      ...parameters.map(({name, value}) => `  ${shellWord(`${name}=${value}`)}`),
      'PROFILE:',
      ...profile
        .trimEnd()
        .split('\n')
        .map(line => (line ? `  ${line}` : '')),
    )
  }
  return lines.join('\n') + '\n'
}
