// How a platform confines a command: on Linux the
// helper applies Landlock itself; on macOS the helper (which still takes
// the lock and closes descriptors) execs sandbox-exec with the Seatbelt
// profile, which execs the command.
import {existsSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {debug, HmmError} from '../ui/errors.js'
import {sandboxLayersSoon} from '../native/helper.js'
import {configPath, type Isolation} from '../sandbox/config.js'
import {tildify} from '../ui/format.js'
import {SANDBOX_EXEC, darwinPath, darwinPolicy, seatbeltArgv} from './darwin.js'
import {usernsRefusal} from './userns-refusal.js'
import {helperExecArgv, isolationArgs, landlockArgs, networkArgs, type HelperControl} from './linux.js'
import {dataPlaces} from './index.js'
import {canonical, unique} from '../sandbox/paths.js'
import {
  buildPolicy,
  ownTmpOf,
  unreadable,
  writePlaces,
  type Network,
  type Platform,
  type PolicyInput,
  type SandboxPolicy,
  type WritePlaces,
} from '../sandbox/policy.js'

/** Landlock ABI 2 brought REFER: without it a sandboxed rename across directories fails. */
const MIN_LANDLOCK_ABI = 2

/** How to opt out of the layers a system cannot give, in the words of the config file. */
export function optOut(): string {
  return `set isolation = "landlock-only" in ${tildify(configPath())}`
}

/**
 * Has the helper start trying the layers that checkSandboxAvailable asks
 * about: called first thing, so that its answer is in before hmm has
 * worked out the policy.
 */
export function tryLayersSoon(platform: Platform): void {
  if (platform === 'linux') sandboxLayersSoon().catch(() => {})
}

/**
 * Refuses, before anything is made, where the sandbox cannot work, and
 * where a layer of it cannot be had and the user has not opted out: never a
 * sandbox weaker than the user was told without a word (SPEC "Sandbox").
 */
export async function checkSandboxAvailable(platform: Platform, isolation: Isolation, network?: Network): Promise<void> {
  if (platform === 'darwin') {
    if (!existsSync(SANDBOX_EXEC)) throw new HmmError(`the sandbox needs ${SANDBOX_EXEC}, which this Mac does not have`)
    if (isolation === 'full') {
      throw new HmmError(
        `macOS has no namespaces for the sandbox (no PID namespace, no overlay over the caches, /tmp shared); to run under Seatbelt alone, ${optOut()}`,
      )
    }
    return
  }
  const layers = await sandboxLayersSoon()
  if (layers.landlock < MIN_LANDLOCK_ABI) {
    const has = layers.landlock === 0 ? 'Landlock is not enabled in this kernel' : `this kernel has Landlock ABI ${layers.landlock}`
    throw new HmmError(`the sandbox needs Landlock ABI ${MIN_LANDLOCK_ABI} or later (Linux 5.19+); ${has}`)
  }
  if (layers.seccomp) throw new HmmError(`the sandbox needs seccomp filters, which this system refuses (${layers.seccomp})`)
  // The network's barrier is a namespace of its own: opted out of namespaces, there is none to have.
  if (network && isolation === 'landlock-only') {
    throw new HmmError(`--net needs the namespaces, and isolation = "landlock-only" is set in ${tildify(configPath())}`)
  }
  if (isolation === 'full' && layers.namespaces) {
    const refused = usernsRefusal(layers.namespaces)
    throw new HmmError(
      `the sandbox needs unprivileged user namespaces, which this system refuses (${refused.cause}); ${refused.fix}; or to run under Landlock alone, ${optOut()}`,
    )
  }
}

/** The policy as the platform sees it (macOS: /tmp is /private/tmp, ...). */
export function platformPolicy(platform: Platform, policy: SandboxPolicy): SandboxPolicy {
  return platform === 'darwin' ? darwinPolicy(policy) : policy
}

/** The helper's whole argv for running the command confined. */
export function sandboxedArgv(platform: Platform, policy: SandboxPolicy, control: HelperControl, command: string[]): string[] {
  if (platform === 'darwin') {
    // The helper execs sandbox-exec, which runs the program by its path.
    const {program, ...rest} = control
    const run = program ? [program, ...command.slice(1)] : command
    return helperExecArgv(rest, [], seatbeltArgv(policy, run, control.proxy?.port))
  }
  return helperExecArgv(control, [...landlockArgs(policy), ...isolationArgs(policy, control), ...networkArgs(policy, control.proxy)], command)
}

/** The user's temporary directory, as the command would be given it. */
export function userTmpdir(): string {
  return process.env.TMPDIR || tmpdir()
}

/** The policy for a command in `tree`, from this process's environment (HOME, TMPDIR). */
export function policyFor(
  platform: Platform,
  options: {tree: string; dataDir: string; writable: string[]; hide?: string[]; unhide?: string[]; network?: Network; namespaces?: boolean} & Pick<
    PolicyInput,
    'layers' | 'agent' | 'compose' | 'origin'
  >,
): SandboxPolicy {
  const policy = buildPolicy({
    tree: options.tree,
    home: process.env.HOME || homedir(),
    dataDir: options.dataDir,
    dataPlaces: dataPlaces(process.env, platform),
    extraWritable: options.writable,
    hide: options.hide,
    unhide: options.unhide,
    tmpdir: userTmpdir(),
    platform,
    network: options.network,
    namespaces: options.namespaces,
    layers: options.layers,
    agent: options.agent,
    compose: options.compose,
    origin: options.origin,
  })
  // Counted by cost.test: each one searches the home for secrets and sockets.
  debug(`made the sandbox policy of ${options.tree}`)
  return platformPolicy(platform, policy)
}

/**
 * policyFor's write places alone: by default for a command with the
 * namespaces off (the caches written in place).
 */
export function writePlacesFor(platform: Platform, options: {dataDir: string; writable: string[]; namespaces?: boolean}): WritePlaces {
  const places = writePlaces({
    home: process.env.HOME || homedir(),
    dataDir: options.dataDir,
    extraWritable: options.writable,
    tmpdir: userTmpdir(),
    platform,
    namespaces: options.namespaces,
  })
  if (platform !== 'darwin') return places
  // As darwinPolicy names them.
  const {writable, readOnly, devices} = darwinPolicy({...places, tree: '/', readable: [], hidden: []})
  return {writable, readOnly, plainOnly: [], devices}
}

/**
 * The policy built for a workspace before it had an ID (its tree named
 * with `<id>`, as hmm sandbox shows it), for the workspace made since at
 * `tree`: the tree is the one path of it that names the workspace (the
 * rest holds hmm's data directory as a whole), with, on macOS, the
 * workspace's own temp directory beside it.
 */
export function placedAt(platform: Platform, policy: SandboxPolicy, tree: string): SandboxPolicy {
  if (platform !== 'darwin') return {...policy, tree: canonical(tree)}
  return {...policy, tree: darwinPath(canonical(tree)), tmpdir: darwinPath(ownTmpOf(canonical(tree)))}
}

/** What policyFor's policy would hide, without the rest of it: what may not be read where the work is `tree`. */
export function hiddenFor(platform: Platform, options: {tree: string; dataDir: string; hide?: string[]; unhide?: string[]}): string[] {
  const hidden = unreadable({...options, home: process.env.HOME || homedir(), dataPlaces: dataPlaces(process.env, platform), platform})
  return platform === 'darwin' ? unique(hidden.map(darwinPath)) : hidden
}
