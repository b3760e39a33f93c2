// `hmm run`: make a workspace of the working directory and run a command in
// it, confined (DESIGN "Data flow of hmm run").
import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'
import {cloneTree, leftOutBy, sharesBlocks} from '../platform/clone.js'
import {afterTreeMade, planFirstIndex, writeFirstIndex} from '../git/first-index.js'
import {recordNestedFork} from '../git/nested-work.js'
import {giveOwnRepository, isLinkedWorktree} from '../git/worktree-repo.js'
import {createPrivateRepo} from '../git/private-repo.js'
import {removeTreeCredentials} from './git-credentials.js'
import {isInsideGitDir} from '../git/top.js'
import {askGitOrigin, recordGitOrigin, recordPlainOrigin, type OriginAnswers, type OriginRecord} from '../git/origin.js'
import {statPairs, stopLocked, type StatPairs} from '../native/helper.js'
import {loadConfig, makeAgentPlaces, settingsFor, type Effective} from '../sandbox/config.js'
import type {Platform} from '../sandbox/policy.js'
import {hiddenFor, tryLayersSoon} from '../platform/confine.js'
import type {Launch} from '../platform/launch.js'
import {currentPlatform} from '../platform/index.js'
import {checkProgramFirst} from '../platform/programs.js'
import {canonical, isWithin} from '../sandbox/paths.js'
import {debugStep, HmmError, say, stopwatch, warn} from '../ui/errors.js'
import {formatBytes, formatWork, listPaths} from '../ui/format.js'
import {progressLine} from '../ui/progress.js'
import {Context} from '../workspaces/context.js'
import {newId} from '../workspaces/ids.js'
import {checkName} from '../workspaces/names.js'
import {removeWorkspace} from '../workspaces/remove.js'
import {recordWork} from '../workspaces/work.js'
import type {Store} from '../workspaces/store.js'
import {treePath, Workspace} from '../workspaces/workspace.js'
import {
  agentAlone,
  commandEnded,
  commandOrShell,
  commandPolicy,
  commandProgram,
  givenWritable,
  inOwnNamespace,
  sayAgentProfile,
  sayInterrupted,
  startFor,
  startInWorkspace,
  waitForCommand,
  whileStarting,
  withNetFlag,
  workspaceLine,
  type WritesKnown,
} from './session.js'
import {warnNetworkNeighbours} from './net-neighbours.js'
import {sayLinksOutOfReach} from './outside-links.js'
import {checkBackgroundPossible, isBackgroundRun, runDetached, saidStarted} from './background.js'

export interface RunRequest {
  name?: string
  writable: string[]
  removeAfter: boolean
  /** --net as given: replaces the config file's `net`. */
  net?: string
  /** The command and its arguments; empty: the user's shell. */
  command: string[]
  /** -d: the command runs in the background, on a terminal hmm keeps (background.ts). */
  detach?: boolean
}

/** Everything that can be checked before anything is made; returns the -w paths given, canonical. */
function checkRequest(context: Context, request: RunRequest): string[] {
  if (request.name !== undefined) checkName(request.name)
  const given = givenWritable(request.writable)
  // Its files are git's bookkeeping, no work tree: cloned, they would make a workspace of nothing to work on.
  if (isInsideGitDir(context.cwd)) throw new HmmError(`${context.cwd} is inside a git directory; run hmm in a work tree`)
  const data = canonical(context.data)
  if (isWithin(context.origin, data)) {
    throw new HmmError(`${context.origin} is inside hmm's data directory ${data}; run hmm in a project directory`)
  }
  if (isWithin(data, context.origin)) {
    throw new HmmError(`${context.origin} holds hmm's data directory ${data}, so it cannot be cloned; run hmm in a project directory or set HMM_HOME`)
  }
  return given
}

/** A secret in the origin would be cloned into the tree, where the command could read it. */
function checkNoSecretCloned(context: Context, platform: Platform, settings: Effective): void {
  // The origin is the work here: a link in a secret's directory to it or above does not make it a secret (policy.ts hiddenPaths).
  const hidden = hiddenFor(platform, {tree: context.origin, dataDir: context.data, hide: settings.hide, unhide: settings.unhide})
  const origin = context.origin
  const around = hidden.find(secret => isWithin(origin, secret))
  if (around) throw new HmmError(`${origin} is hidden by the sandbox (${around}), so it cannot be cloned; run hmm in a project directory`)
  const inside = hidden.find(secret => isWithin(secret, origin) && existsSync(secret))
  if (!inside) return
  // The user's own hide of a project's file: what keeps a project's files out of its workspaces is exclude.
  if (settings.hide.some(path => path === inside || canonical(path) === inside)) {
    const pattern = JSON.stringify(relative(origin, inside))
    throw new HmmError(
      `${origin} holds ${inside}, which hide in the config file hides, so it cannot be cloned: exclude = [${pattern}] in the config file leaves it out of workspaces`,
    )
  }
  throw new HmmError(`${origin} holds ${inside}, which the sandbox hides, so it cannot be cloned; run hmm in a project directory`)
}

/** The clone's `exclude`: the workspace's patterns, and where the clone names what it left out. */
const excludeOf = (workspace: Workspace) => ({patterns: workspace.excludeFile, leftOut: join(workspace.root, 'left-out')})

/** Says once what the config file's `exclude` left out of the workspace. */
function sayLeftOut(workspace: Workspace): void {
  const exclude = excludeOf(workspace)
  const left = leftOutBy(exclude)
  rmSync(exclude.leftOut, {force: true})
  if (left.length > 0) say(`left out of the workspace: ${listPaths(left)} (exclude in the config file)`)
}

/** What makeTree records: the origin, and the disk space the clone took (0: it shares its blocks; null: not known). */
type Made = OriginRecord & {originKind: 'git' | 'plain'; size: number | null}

/** Records the origin (`asked`: askGitOrigin's answers) and clones it into the tree. */
async function makeTree(workspace: Workspace, asked: Promise<OriginAnswers | undefined>, signal: AbortSignal): Promise<Made> {
  const origin = workspace.row.origin
  const timing = stopwatch()
  const answers = await asked
  const repoOfOrigin = answers?.repo
  const recorded = answers ? (await recordGitOrigin(origin, answers, workspace.gitDir, workspace.excludeFile)).record : undefined
  const firstIndex = repoOfOrigin && planFirstIndex(workspace.gitDir, repoOfOrigin.objectFormat)
  // A plain origin's private repository is made while the clone runs: it needs nothing of it.
  const plainRepo = answers ? undefined : createPrivateRepo(workspace.gitDir)
  plainRepo?.catch(() => {})
  timing.lap('recorded the origin')
  mkdirSync(dirname(workspace.tree), {recursive: true})
  const progress = progressLine(`cloning ${origin}`)
  // Bytes each clone copied, as the helper reports them (not at all on macOS or through cp).
  const copied = {tree: undefined as number | undefined, base: 0}
  let stats: StatPairs | undefined
  try {
    const onProgress = (files: number, bytes: number) => {
      copied.tree = bytes
      progress?.update(files, bytes)
    }
    stats = await cloneTree(origin, workspace.tree, {signal, onProgress, statPaths: firstIndex?.paths, exclude: excludeOf(workspace)})
  } finally {
    progress?.done()
  }
  timing.lap('cloned')
  if (repoOfOrigin && isLinkedWorktree(repoOfOrigin)) await giveOwnRepository(origin, repoOfOrigin, workspace.tree)
  // Before the command starts, so it never sees them: tokens the origin's repository keeps for git (and hmm pr).
  if (repoOfOrigin) await removeTreeCredentials(workspace.tree, workspace.root)
  const treeMade = Date.now()
  const size = () => (sharesBlocks(origin, workspace.root) ? 0 : copied.tree === undefined ? null : copied.tree + copied.base)
  if (repoOfOrigin && recorded) {
    if (firstIndex) writeFirstIndex(firstIndex, stats ?? statPairs(origin, workspace.tree, firstIndex.paths), treeMade)
    timing.lap('indexed the clone')
    await recordNestedFork(workspace, recorded.forkTree)
    await afterTreeMade(treeMade, workspace.root)
    return {...recorded, originKind: 'git', size: size()}
  }
  mkdirSync(dirname(workspace.base), {recursive: true})
  const record = await recordPlainOrigin(plainRepo ?? createPrivateRepo(workspace.gitDir), workspace.tree, workspace.base, treeMade, (from, to) =>
    cloneTree(from, to, {signal, onProgress: (_, bytes) => (copied.base = bytes)}),
  )
  timing.lap('recorded the clone and its base')
  await recordNestedFork(workspace, record.forkTree)
  await afterTreeMade(treeMade, workspace.root)
  return {...record, originKind: 'plain', size: size()}
}

/**
 * Says, on a terminal and once for the data directory, that the file system
 * cannot copy-on-write, so each workspace is a full copy (`hmm ls -l` shows
 * each one's size afterwards).
 */
function noteFullCopy(context: Context, size: number | null): void {
  if (!size || !process.stderr.isTTY) return
  const said = join(context.data, 'said-no-copy-on-write')
  if (existsSync(said)) return
  writeFileSync(said, '')
  warn(`no copy-on-write on this file system: the workspace is a full copy (${formatBytes(size)})`)
}

/** Removes what was made of a workspace whose command never started; false if that failed (it then shows as broken). */
/** hmm run --rm's end: what the workspace held is counted, then thrown away, and said when there was any. */
async function removeSaying(context: Context, workspace: Workspace): Promise<void> {
  const work = await recordWork(context.store, workspace, context.data).catch(() => undefined)
  await removeWorkspace(context.store, workspace)
  const thrown = work && !work.taken ? formatWork(work) : '-'
  if (thrown !== '-' && thrown !== '?') say(`removed workspace ${workspace.label}, discarding ${thrown}`)
}

async function removeUnstarted(store: Store, workspace: Workspace): Promise<boolean> {
  try {
    await removeWorkspace(store, workspace)
    return true
  } catch {
    return false
  }
}

export async function runWorkspace(request: RunRequest): Promise<number> {
  const background = request.detach === true && isBackgroundRun()
  if (request.detach && !background) return runDetached()
  debugStep('run: started')
  const context = new Context()
  const platform = currentPlatform()
  tryLayersSoon(platform)
  const command = commandOrShell(request.command)
  const given = checkRequest(context, request)
  const settings = withNetFlag(settingsFor(loadConfig(), command), request.net)
  if (background) checkBackgroundPossible(settings.isolation, platform, 'run')
  checkNoSecretCloned(context, platform, settings)
  // The origin's repository is asked about while the policy is built, by a git checked against where the command could
  // write, once the helper has said the sandbox can be had; a failure is said where the answers are awaited.
  let asked: Promise<OriginAnswers | undefined> = Promise.resolve(undefined)
  const askOrigin: WritesKnown = (writes, available) => {
    checkProgramFirst('git', writes)
    asked = available.then(() => askGitOrigin(context.origin))
    asked.catch(() => {})
  }
  // Before the workspace has an ID: its tree as hmm sandbox shows it, placed when the command starts (session.ts).
  const policy = await commandPolicy(
    context,
    platform,
    {tree: treePath(context.data, '<id>', context.origin), origin: context.origin, command},
    given,
    settings,
    askOrigin,
  )
  debugStep('run: sandbox policy made')
  const program = commandProgram(settings, command, policy)
  warnNetworkNeighbours(context, settings)
  makeAgentPlaces(settings)
  const store = context.store
  // From the reservation until the command starts, a signal means: give up, leave nothing behind, say so.
  const starting = whileStarting()
  let workspace: Workspace | undefined
  let running: Launch | undefined
  // The tree is made while the helper starts (it only waits until then); stopped where the start fails.
  const making = new AbortController()
  let made: Promise<Made> | undefined
  try {
    const agent = settings.agent?.name ?? ''
    workspace = new Workspace(store.reserve({name: request.name ?? null, origin: context.origin, command, writable: given, agent}, newId), context.data)
    mkdirSync(workspace.root, {recursive: true, mode: 0o700})
    writeFileSync(workspace.lock, '')
    if (background) mkdirSync(workspace.background, {mode: 0o700})
    // Made before the helper starts: the composed home shows the workspace's tree directory, which the clone then fills.
    mkdirSync(dirname(workspace.tree))
    writeFileSync(workspace.excludeFile, settings.exclude.map(pattern => `${pattern}\n`).join(''))
    // Started in the subdirectory of the tree the user is in (the origin is the repository's top).
    const start = startFor(workspace, context.cwd)
    const alone = agentAlone(settings, workspace.row.onlyAgent)
    made = makeTree(workspace, asked, AbortSignal.any([starting.signal, making.signal]))
    made.catch(() => {})
    running = await startInWorkspace(workspace, {platform, policy, command, settings, start, program, alone, background})
    debugStep('run: helper started')
    starting.check()
    const record = await made
    starting.check()
    store.update(workspace.id, {state: 'ready', ...record})
    noteFullCopy(context, record.size)
    sayLeftOut(workspace)
    sayLinksOutOfReach(workspace.tree, given)
  } catch (error) {
    making.abort()
    running?.abort()
    await Promise.all([made?.catch(() => undefined), running?.outcome.catch(() => undefined)])
    const removed = workspace && (await removeUnstarted(store, workspace))
    // Listened to until here: a second Ctrl-C does not cut the clean-up short.
    starting.stop()
    const interruptedBy = starting.interruptedBy()
    if (!interruptedBy) throw error
    if (!workspace) return sayInterrupted(interruptedBy)
    return sayInterrupted(interruptedBy, `: workspace ${workspace.label} ${removed ? 'removed' : 'is left broken (hmm rm removes it)'}`)
  }

  sayAgentProfile(settings, platform)
  say(workspaceLine(workspace))
  if (background) saidStarted()
  const {status, end} = await waitForCommand(running, command, starting, workspace)

  if (request.removeAfter) {
    // What the command left running goes first: nothing of the workspace may race its removal.
    if (stopLocked([workspace.lock])[0] === 'still-running') say(`workspace ${workspace.label} could not be stopped, so it is not removed`)
    else await removeSaying(context, workspace)
  } else {
    await commandEnded(context, workspace, end, inOwnNamespace(platform, settings))
  }
  return status
}
