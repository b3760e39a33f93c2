// A command running in a workspace under the sandbox: what it may write,
// starting it, passing signals on while hmm waits for it, and its end. One
// path for `hmm run` and `hmm exec`, so a command continued with exec runs
// under exactly the sandbox run gives it.
import {existsSync, lstatSync, mkdirSync, statSync} from 'node:fs'
import {isAbsolute, join, relative, resolve, sep} from 'node:path'
import {constants, homedir} from 'node:os'
import {planReading, readFilesSoon} from '../git/changes.js'
import {commandsOver} from '../git/first-index.js'
import {gitOriginOf} from '../git/origin.js'
import {isLinkedWorktree} from '../git/worktree-repo.js'
import {lockedFiles} from '../native/helper.js'
import {netFromFlag, networkOf, type Effective} from '../sandbox/config.js'
import {parseRules} from '../net/hosts.js'
import {agentBinds, agentPlaces} from './agent-places.js'
import {gitConfigBinds, gitSettingFiles} from './git-credentials.js'
import {cleansNpmConfig, npmConfigBinds, npmUserConfig} from './npm-config.js'
import {startupFileBinds} from './startup-files.js'
import {cleanedToolConfigs, toolConfigBinds} from './tool-configs.js'
import {unmountedCopies} from './unmounted-copies.js'
import {checkNoLinkOnTheWay, checkNotDataDirectory, checkNotInOwnTemp, checkReadsOutOfReach, writtenInPlace} from './grants.js'
import {lookupBinds, startNetwork} from './network.js'
import {launch, type Launch, type Outcome} from '../platform/launch.js'
import {checkSandboxAvailable, placedAt, policyFor, userTmpdir, writePlacesFor} from '../platform/confine.js'
import {dataPlaces} from '../platform/index.js'
import {agentProgram, checkProgramsOutOfReach} from '../platform/programs.js'
import {commandEnv, noFsmonitor, othersRepositoriesGit, unsignedGit} from '../sandbox/env.js'
import {canonical} from '../sandbox/paths.js'
import {withBinds, type Platform, type PolicyInput, type SandboxPolicy, type WritePlaces} from '../sandbox/policy.js'
import {debugStep, HmmError, say} from '../ui/errors.js'
import {formatWork, tildify} from '../ui/format.js'
import type {Context} from '../workspaces/context.js'
import {recordWork} from '../workspaces/work.js'
import type {Workspace} from '../workspaces/workspace.js'

/** The command to run: the one given, else the user's shell. */
export function commandOrShell(command: string[]): string[] {
  return command.length > 0 ? command : [process.env.SHELL || '/bin/sh']
}

/** The -w paths given on the command line, checked to exist, absolute (their links are judged with the policy: grants.ts). */
export function givenWritable(paths: string[]): string[] {
  return paths.map(path => {
    if (!existsSync(path)) throw new HmmError(`${path} does not exist`)
    return resolve(path)
  })
}

/**
 * What the composed home (sandbox/home.ts) shows besides the places the
 * command writes: the config file's `show`, what an agent's profile gives
 * back, the package managers' cleaned configs, the directories of PATH, the command itself
 * where it is named by its path, and `gitReads`: what git reads beyond
 * the home's lists (a linked worktree's borrowed objects, the files the
 * user's git config includes and names).
 */
export function composeInput(settings: Effective, command: string[], gitReads: string[] = []): NonNullable<PolicyInput['compose']> {
  const program = command[0] !== undefined && isAbsolute(command[0]) ? [canonical(command[0])] : []
  const env = process.env
  return {
    show: [...settings.show, ...settings.unhide, ...cleanedConfigs(settings), ...gitReads],
    path: (env.PATH ?? '').split(':'),
    programs: program,
  }
}

/**
 * The package managers' config files where a copy without their logins is
 * bound over them (npm-config.ts, tool-configs.ts), unless the config file
 * hides them.
 */
export function cleanedConfigs(settings: Effective): string[] {
  const npm = cleansNpmConfig(process.env, homedir()) ? [npmUserConfig(process.env, homedir())] : []
  return [...npm, ...cleanedToolConfigs(process.env, homedir())].filter(file => !settings.hide.includes(file))
}

/**
 * The object directory the workspace's repository borrows, read-only, when
 * the origin is a linked worktree (git/worktree-repo.ts): the composed home
 * must hold it where the origin lies in the home. Asked of git only where
 * the origin's .git is a file.
 */
async function borrowedObjects(origin: string): Promise<string[]> {
  if (!lstatSync(join(origin, '.git'), {throwIfNoEntry: false})?.isFile()) return []
  const repo = await gitOriginOf(origin)
  return repo && isLinkedWorktree(repo) ? [repo.objects] : []
}

/** The settings with --net, when given, in place of the config file's `net`. */
export function withNetFlag(settings: Effective, net: string | undefined): Effective {
  return net === undefined ? settings : {...settings, net: netFromFlag(net)}
}

/**
 * Called with where the command could write, before the rest of its
 * policy is built, and with the check that the sandbox's layers can be had
 * (resolved once the helper has said so; rejected with the refusal).
 */
export type WritesKnown = (writes: WritePlaces, available: Promise<void>) => void

/**
 * The sandbox of the command in the workspace whose tree is `tree`, made
 * from `origin`, built once, before anything is made: the command may also
 * write the -w paths and the config file's (which need not exist on every
 * machine it is used on: a missing one grants nothing). Refuses where the
 * sandbox cannot work or the command could reach hmm's own files or what
 * hmm reads outside later. `writesKnown`: see WritesKnown.
 */
export async function commandPolicy(
  context: Context,
  platform: Platform,
  {tree, origin, command}: {tree: string; origin: string; command: string[]},
  given: string[],
  settings: Effective,
  writesKnown?: WritesKnown,
): Promise<SandboxPolicy> {
  const network = networkOf(settings)
  // Bad hosts are refused before anything is made.
  if (network?.kind === 'proxy') parseRules(network.hosts)
  // The helper tries the layers while the rest is worked out; what it finds missing is said first, as if tried first.
  const available = checkSandboxAvailable(platform, settings.isolation, network)
  available.catch(() => {})
  const policy = checkedPolicy(context, platform, {tree, origin, command}, given, settings, available, writesKnown)
  policy.catch(() => {})
  await available
  return policy
}

/** commandPolicy but for the layers: the policy, and its checks. */
async function checkedPolicy(
  context: Context,
  platform: Platform,
  {tree, origin, command}: {tree: string; origin: string; command: string[]},
  given: string[],
  settings: Effective,
  available: Promise<void>,
  writesKnown?: WritesKnown,
): Promise<SandboxPolicy> {
  const network = networkOf(settings)
  const namespaces = settings.isolation === 'full'
  const places = agentPlaces(settings, platform, namespaces)
  checkNotDataDirectory(dataPlaces(process.env, platform), {given, configured: settings.write})
  const asked = [...given, ...places.writable]
  const writable = asked.map(canonical)
  writesKnown?.(writePlacesFor(platform, {dataDir: context.data, writable, namespaces}), available)
  const policy = policyFor(platform, {
    tree,
    dataDir: context.data,
    hide: settings.hide,
    // The origin itself: the command has its clone; what the clone leaves out (exclude: a project's .env) and what the
    // user changes there since are not its to read, wherever the origin lies (the composed home hides only the home).
    origin,
    // With the namespaces the package managers' configs are read as copies without their logins (tool-configs.ts).
    unhide: namespaces ? [...settings.unhide, ...cleanedConfigs(settings)] : settings.unhide,
    network,
    namespaces,
    ...places,
    writable,
    agent: settings.agent?.name,
    ...(settings.home === 'composed'
      ? {compose: composeInput(settings, command, [...(await borrowedObjects(origin)), ...(await gitSettingFiles(process.env, homedir()))])}
      : {}),
  })
  checkNoLinkOnTheWay(policy, namespaces, {write: asked, tmpdir: userTmpdir()})
  if (namespaces) checkNotInOwnTemp(policy, writable)
  checkProgramsOutOfReach(policy, {asked: writable, unasked: namespaces ? [] : writtenInPlace(policy, false)})
  await checkReadsOutOfReach(policy, namespaces, origin)
  return policy
}

/**
 * The file a command with an agent's profile runs, found outside and
 * checked before anything is made (programs.ts agentProgram); undefined
 * for other commands, looked up on PATH inside as a shell would.
 */
export function commandProgram(settings: Effective, command: string[], policy: SandboxPolicy): string | undefined {
  return settings.agent ? agentProgram(command[0], policy) : undefined
}

/**
 * Whether the command is an agent that alone ran in the workspace: every
 * command there, this one included, had its profile (Store onlyAgent).
 * Then nothing but the agent and what it ran wrote the tree, and Claude
 * Code is told it is sandboxed, so it does not ask to trust the folder.
 * Once another command ran there (say an install script), what it left in
 * the tree's .claude settings (hooks) and .mcp.json would run at the
 * agent's start, with its login: Claude Code asks, as anywhere else
 * (attacker's review 5, F5).
 */
export function agentAlone(settings: Effective, onlyAgent: string | null): boolean {
  return settings.agent !== undefined && onlyAgent === settings.agent.name
}

/** Where a command starts: a directory of the workspace's tree, and the tree's top, canonical, it is reached from. */
export interface Start {
  dir: string
  top: string
}

/**
 * Where `hmm run` starts the command: at the place the user's directory
 * has in the origin (the top for one outside it), in the tree about to be
 * cloned. The user's directory is canonical, so no link of the origin's
 * lies on that way; the helper enters it from the top through directories
 * alone (native-helpers/exec.c enter_start).
 */
export function startFor(workspace: Workspace, cwd: string): Start {
  const top = canonical(workspace.tree)
  return {top, dir: join(top, relative(workspace.tree, workspace.treeDirFor(cwd)))}
}

/**
 * Where `hmm exec` starts the command: as run, where each directory on the
 * way from the tree's top is one, looked at without following links. The
 * tree is the command's: a link it put in the place of a directory leads
 * wherever it chose, /proc/self/cwd/.. to hmm's own directory, the user's
 * real one beneath the mask over the origin (attacker's review 24, F1). So
 * the start's real path is the path named, in the tree. Otherwise (the
 * command removed that directory, or made it or one on the way a link or a
 * file) the tree's top, said in one line.
 */
export function startInTree(workspace: Workspace, cwd: string): Start {
  const start = startFor(workspace, cwd)
  const rel = relative(start.top, start.dir)
  const names = rel === '' ? [] : rel.split(sep)
  for (let i = 1; i <= names.length; i++) {
    const part = names.slice(0, i).join(sep)
    const stat = lstatSync(join(start.top, part), {throwIfNoEntry: false})
    if (stat?.isDirectory()) continue
    const why = stat === undefined ? '' : `, ${part} is ${stat.isSymbolicLink() ? 'a link' : 'not a directory'} there`
    say(`no directory ${rel} in workspace ${workspace.label}${why}; the command starts at the top of its tree`)
    return {dir: start.top, top: start.top}
  }
  return start
}

/**
 * Starts the helper for the command in the workspace's tree: it takes the
 * workspace's lock at once and waits for go() (run makes the tree meanwhile).
 */
export async function startInWorkspace(
  workspace: Workspace,
  options: {
    platform: Platform
    policy: SandboxPolicy
    command: string[]
    settings: Effective
    /** startFor's or startInTree's. */
    start: Start
    /** commandProgram's. */
    program: string | undefined
    /** agentAlone's. */
    alone: boolean
    /** hmm run -d: the command's terminal is the helper's, kept in the workspace's background directory. */
    background?: boolean
  },
): Promise<Launch> {
  const {settings} = options
  const network = networkOf(settings)
  // Its own /tmp, caches and PID namespace, unless the user opted out of namespaces.
  const isolated = settings.isolation === 'full' ? workspace.root : undefined
  const binds =
    isolated === undefined || options.platform !== 'linux'
      ? []
      : [
          ...agentBinds(settings, isolated, canonical(workspace.tree)),
          ...(await gitConfigBinds(isolated, process.env, homedir(), workspace.row.origin)),
          ...npmConfigBinds(isolated, process.env, homedir()),
          ...toolConfigBinds(isolated, process.env, homedir(), cleanedConfigs(settings)),
          ...startupFileBinds(isolated, homedir()),
          ...lookupBinds(isolated, network),
        ]
  // Without the namespaces the composed home is rules, and the cleaned copies are reached through variables.
  const copies =
    isolated === undefined && options.policy.home
      ? await unmountedCopies(workspace.root, process.env, homedir(), {
          origin: workspace.row.origin,
          configs: cleanedConfigs(settings),
          writable: options.policy.writable,
        })
      : undefined
  // Its proxy lives as long as the command: closed, and its refusals said, when the helper has exited.
  const net = await startNetwork(options.platform, network, workspace.id)
  const placed = withBinds(placedAt(options.platform, options.policy, workspace.tree), binds)
  const confinement = {
    platform: options.platform,
    policy: copies ? {...placed, readable: [...placed.readable, ...copies.readable], hidden: [...placed.hidden, ...copies.hidden]} : placed,
    workspace: isolated,
    lock: workspace.lock,
    cwd: options.start.dir,
    cwdTop: options.start.top,
    command: options.command,
    program: options.program,
    proxy: net.proxy,
    background: options.background ? workspace.background : undefined,
  }
  const own = commandEnv(process.env, settings.env, {
    ...(options.alone ? {CLAUDE_CODE_SANDBOXED: '1'} : {}),
    HMM_WORKSPACE: workspace.id,
    ...(workspace.row.name === null ? {} : {HMM_WORKSPACE_NAME: workspace.row.name}),
    ...(confinement.policy.tmpdir ? {TMPDIR: confinement.policy.tmpdir} : {}),
    ...copies?.env,
    ...net.env,
  })
  const unsigned = unsignedGit(own)
  const ownsOrigin = statSync(workspace.row.origin, {throwIfNoEntry: false})?.uid === process.getuid?.()
  const gitEnv = ownsOrigin ? unsigned : othersRepositoriesGit(unsigned)
  const env = settings.agent ? noFsmonitor(gitEnv) : gitEnv
  // macOS: the workspace's own temp directory, its $TMPDIR (on Linux the helper makes it).
  if (options.platform === 'darwin' && confinement.policy.tmpdir) mkdirSync(confinement.policy.tmpdir, {recursive: true, mode: 0o700})
  try {
    const launched = launch(confinement, {env, io: options.background ? 'ignore' : 'inherit', detached: false})
    return {...launched, outcome: launched.outcome.finally(() => net.finish())}
  } catch (error) {
    await net.finish()
    throw error
  }
}

const paths = (list: string[]) => list.map(path => tildify(path)).join(' ') || 'nothing'

/**
 * What the profile's `write` gives, as it is in force (agent-places.ts):
 * the agent's own directory and state file are kept with the workspace
 * where they are layered (`layered`), else of its directory only its
 * sessions, records and login are written, in place.
 */
function describeWrites(agent: NonNullable<Effective['agent']>, write: string[], layered: boolean): string {
  const own = (path: string) => agent.layers.includes(path) || (layered && agent.state.includes(path))
  const kept = write.filter(own)
  const through = agent.logins.length > 0 ? ' (its login written through)' : ''
  const plain = write.filter(path => !own(path))
  const groups = [
    ...(plain.length > 0 ? [paths(plain)] : []),
    ...(kept.length === 0 ? [] : [layered ? `${paths(kept)} kept with the workspace${through}` : `only the sessions, records and login in ${paths(kept)}`]),
  ]
  return `may also write ${groups.join(', and ') || 'nothing'}`
}

/**
 * An agent profile as its line shows it: its name, where it comes from,
 * and what it sets (only the keys it has); `layered`: its places are
 * layers of the workspace (agent-places.ts).
 */
export function describeProfile(agent: NonNullable<Effective['agent']>, layered: boolean): string {
  const {write, hide, unhide, env, isolation, net} = agent.sets
  const names = (list: string[]) => list.join(' ') || 'nothing'
  const hosts = (list: string[]) => list.join(', ') || 'no host'
  const parts = [
    write && describeWrites(agent, write, layered),
    hide && `hides ${paths(hide)}`,
    unhide && `unhides ${paths(unhide)}`,
    env?.keep && `keeps ${names(env.keep)}`,
    env?.remove && `removes ${names(env.remove)}`,
    isolation && `isolation ${isolation}`,
    net && (net === 'none' ? 'no network' : `network only to ${hosts(net === 'profile' ? (agent.hosts ?? []) : net)}`),
  ]
  return `${agent.name} (${agent.from}): ${parts.filter(Boolean).join('; ') || 'changes nothing'}`
}

/** Says which agent profile applies, if one does, before the workspace line. */
export function sayAgentProfile(settings: Effective, platform: Platform): void {
  const layered = agentPlaces(settings, platform, settings.isolation === 'full').layers !== undefined
  if (settings.agent) say(`agent profile ${describeProfile(settings.agent, layered)}`)
}

export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 15
}

function statusOf(outcome: Outcome, command: string[]): number {
  switch (outcome.kind) {
    case 'exited':
      return outcome.status
    case 'signalled':
      return 128 + signalNumber(outcome.signal)
    case 'not-started':
      say(`${command[0]}: ${outcome.reason}`)
      return outcome.status
    case 'setup-failed':
      say(`the sandbox could not be set up: ${outcome.reason}`)
      return 1
  }
}

/**
 * Signals hmm passes on to the command. Those a terminal sends (Ctrl-C,
 * Ctrl-\) reach the command without hmm when hmm's stdin is a terminal: as
 * bytes through the command's own pseudo-terminal, which the helper relays
 * (native-helpers/pty.c), or, opted out of the namespaces, from the terminal
 * it shares; so they are passed on only when stdin is not one. Window
 * resizes are the helper's (or reach the command directly) and not handled here.
 */
export const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']
const FROM_TERMINAL = new Set<NodeJS.Signals>(['SIGINT', 'SIGQUIT'])

/** Signals that, while hmm is still starting the command, mean "give up". */
const ABORTING = new Set<NodeJS.Signals>(['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT'])

export interface Starting {
  /** Aborted by the first such signal: what is being made stops. */
  signal: AbortSignal
  /** The signal that interrupted hmm, if one did. */
  interruptedBy(): NodeJS.Signals | undefined
  /** Throws Interrupted if a signal came. */
  check(): void
  stop(): void
}

/** What a signal that came while hmm was starting the command throws. */
class Interrupted extends Error {}

/**
 * Until the command starts, a signal (Ctrl-C at the terminal reaches hmm
 * and its children at once) means: give up. Node's default would end hmm
 * there and then, saying nothing and leaving a half-made workspace; hmm
 * instead notes it, stops what it is making, and its caller cleans up and
 * says so. Listens from now until stop() (waitForCommand stops it once its
 * own listeners are on, so no signal falls between them).
 */
export function whileStarting(): Starting {
  const making = new AbortController()
  let interruptedBy: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (!ABORTING.has(signal)) return
    interruptedBy ??= signal
    making.abort()
  }
  for (const signal of FORWARDED) process.on(signal, onSignal)
  return {
    signal: making.signal,
    interruptedBy: () => interruptedBy,
    check: () => {
      if (interruptedBy) throw new Interrupted(interruptedBy)
    },
    stop: () => {
      for (const signal of FORWARDED) process.off(signal, onSignal)
    },
  }
}

/** The one line for a start given up on a signal; hmm's exit status for it. */
export function sayInterrupted(signal: NodeJS.Signals, what = ''): number {
  say(`interrupted before the command started${what}`)
  return 128 + signalNumber(signal)
}

/** How a command ended, as the registry keeps it (`hmm ls -l`, `--json`): neither when it never started. */
export interface CommandEnd {
  exitCode: number | null
  exitSignal: number | null
}

function endOf(outcome: Outcome): CommandEnd {
  if (outcome.kind === 'signalled') return {exitCode: null, exitSignal: signalNumber(outcome.signal)}
  return {exitCode: outcome.kind === 'setup-failed' ? null : outcome.status, exitSignal: null}
}

/** Lets the command go, passes signals on until it ends, and returns hmm's exit status for it and how it ended. */
export async function waitForCommand(running: Launch, command: string[], starting: Starting, workspace: Workspace): Promise<{status: number; end: CommandEnd}> {
  const onSignal = (signal: NodeJS.Signals) => {
    if (FROM_TERMINAL.has(signal) && process.stdin.isTTY) return
    running.child.kill(signal)
  }
  for (const signal of FORWARDED) process.on(signal, onSignal)
  starting.stop()
  try {
    debugStep('command starting')
    running.go()
    // What hmm does once the command ends, worked out while it runs (after the go-ahead has gone out).
    setImmediate(() => planReading(workspace))
    const outcome = await running.outcome
    debugStep('command ended')
    return {status: statusOf(outcome, command), end: endOf(outcome)}
  } finally {
    for (const signal of FORWARDED) process.off(signal, onSignal)
  }
}

/**
 * Records that a command hmm waited for has ended, how (something it left
 * running may still hold the lock), and what the workspace now holds, and says the
 * workspace's line again, ending with that (as WORK shows it).
 */
export async function commandEnded(context: Context, workspace: Workspace, end: CommandEnd, ownNamespace: boolean): Promise<void> {
  // The sandbox of the git that reads the files is set up while hmm records the end.
  readFilesSoon(workspace)
  const held = lockedFiles([workspace.lock])[0]
  context.store.commandEnded(workspace.id, held, end)
  // Nothing of the workspace runs: its namespace ended what the command left, and no other command holds the lock.
  if (ownNamespace && !held) commandsOver(workspace.gitDir)
  const work = await recordWork(context.store, workspace, context.data)
  say(`${workspaceLine(workspace)} (${formatWork(work)})`)
}

/**
 * Whether what the command starts ends with it, or holds the workspace's
 * lock while it lives: in a PID namespace of its own (Linux, with the
 * namespaces), whose init holds the lock until the last process is gone.
 * Without it, a process that closed the lock lives on unseen.
 */
export function inOwnNamespace(platform: Platform, settings: Effective): boolean {
  return platform === 'linux' && settings.isolation === 'full'
}

/** `workspace <label>: <tree>`, said when a command starts and (with its work) when it ends. */
export function workspaceLine(workspace: Workspace): string {
  return `workspace ${workspace.label}: ${workspace.tree}`
}
