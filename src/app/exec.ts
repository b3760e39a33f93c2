// `hmm exec [-d] [-w PATH]... WS [COMMAND [ARG...]]`: a command again in an
// existing workspace, to continue its work, under the sandbox `hmm run`
// gives (session.ts): the -w paths it was given, and any given now, kept for
// the next. Several commands may run in one workspace at once; -d in the
// background as `hmm run -d` (background.ts), one such at a time.
import {loadConfig, makeAgentPlaces, networkOf, settingsFor, type Effective} from '../sandbox/config.js'
import {currentPlatform} from '../platform/index.js'
import {tryLayersSoon} from '../platform/confine.js'
import {debugStep, HmmError, say} from '../ui/errors.js'
import {Context} from '../workspaces/context.js'
import {status, type Status} from '../workspaces/status.js'
import type {Workspace} from '../workspaces/workspace.js'
import {noteCommandStart} from '../git/first-index.js'
import {lockedFiles, runsMoreNetwork} from '../native/helper.js'
import type {Launch} from '../platform/launch.js'
import {hostsMark} from '../sandbox/policy.js'
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
  startInTree,
  startInWorkspace,
  waitForCommand,
  whileStarting,
  withNetFlag,
  workspaceLine,
} from './session.js'
import {warnNetworkNeighbours} from './net-neighbours.js'
import {checkBackgroundPossible, isBackgroundRun, prepareBackground, runDetached, saidStarted} from './background.js'

export interface ExecRequest {
  key: string | undefined
  writable: string[]
  /** --net as given: replaces the config file's `net`. */
  net?: string
  /** The command and its arguments; empty: the user's shell. */
  command: string[]
  /** -d: the command runs in the background, on a terminal hmm keeps (background.ts). */
  detach?: boolean
}

/**
 * A network limit (--net, or net in the config file) confines one command,
 * not the workspace: a process an earlier command left running with more
 * network can relay for it through a socket or FIFO in the files and /tmp
 * they share. So such a command does not start beside one with more: the
 * user's network, or (for none) a host list, or another host list. The
 * networks of what runs are marked on the lock (native-helpers/marks.c).
 */
function checkNetCanHold(workspace: Workspace, state: Status, settings: Effective): void {
  const network = networkOf(settings)
  if (state !== 'running' || network === undefined) return
  if (!runsMoreNetwork(workspace.lock, network.kind === 'proxy' ? hostsMark(network.hosts) : undefined)) return
  const key = workspace.row.name ?? workspace.id
  const asked = network.kind === 'proxy' ? network.hosts.join(', ') : 'none'
  throw new HmmError(
    `workspace ${workspace.label} is running something with more network than this command's (${asked}), which it could lend through the workspace's files and /tmp; hmm stop ${key} first`,
  )
}

export async function execWorkspace(request: ExecRequest): Promise<number> {
  if (request.key === undefined) throw new HmmError('exec needs the workspace to run in')
  const background = request.detach === true && isBackgroundRun()
  if (request.detach && !background) return runDetached()
  debugStep('exec: started')
  const context = new Context()
  try {
    const platform = currentPlatform()
    tryLayersSoon(platform)
    const command = commandOrShell(request.command)
    const given = givenWritable(request.writable)
    const workspace = context.workspace(request.key)
    const state = status(workspace)
    if (state === 'broken') throw new HmmError(`workspace ${workspace.label} is broken (hmm rm removes it)`)
    // Running but not ready: the run that makes it is still cloning.
    if (workspace.row.state !== 'ready') throw new HmmError(`workspace ${workspace.label} is still being made`)
    const kept = [...new Set([...workspace.row.writable, ...given])]
    const settings = withNetFlag(settingsFor(loadConfig(), command), request.net)
    if (background) checkBackgroundPossible(settings.isolation, platform, 'exec')
    checkNetCanHold(workspace, state, settings)
    warnNetworkNeighbours(context, settings, workspace.id)
    const policy = await commandPolicy(context, platform, {tree: workspace.tree, origin: workspace.row.origin, command}, kept, settings)
    debugStep('exec: sandbox policy made')
    const program = commandProgram(settings, command, policy)
    makeAgentPlaces(settings)
    if (background) prepareBackground(workspace)
    if (kept.length !== workspace.row.writable.length) context.store.update(workspace.id, {writable: kept})

    // Counted before the helper takes the lock, so a command ending meanwhile does not mark it idle.
    const alone = agentAlone(settings, context.store.commandStarted(workspace.id, settings.agent?.name ?? ''))
    // Where the user is, as run does, through directories of the tree alone; else the tree's top.
    const start = startInTree(workspace, context.cwd)
    // Until the command starts, a signal means: give up and say so (the workspace stays as it was).
    const starting = whileStarting()
    let running: Launch | undefined
    try {
      // Before anything it runs can write: a check of the files cloned last, made before, no longer stands alone.
      noteCommandStart(workspace.gitDir)
      running = await startInWorkspace(workspace, {platform, policy, command, settings, start, program, alone, background})
      starting.check()
    } catch (error) {
      running?.abort()
      await running?.outcome.catch(() => undefined)
      context.store.commandEnded(workspace.id, lockedFiles([workspace.lock])[0])
      starting.stop()
      const interruptedBy = starting.interruptedBy()
      if (interruptedBy) return sayInterrupted(interruptedBy)
      throw error
    }
    sayAgentProfile(settings, platform)
    say(workspaceLine(workspace))
    if (background) saidStarted()
    const {status: exitStatus, end} = await waitForCommand(running, command, starting, workspace)
    await commandEnded(context, workspace, end, inOwnNamespace(platform, settings))
    return exitStatus
  } finally {
    context.close()
  }
}
