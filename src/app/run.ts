// `hmm run`: make a workspace of the working directory and run a command in
// it, confined (DESIGN "Data flow of hmm run").
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {dirname, join} from 'node:path'
import {constants} from 'node:os'
import {cloneTree} from '../platform/clone.js'
import {gitOriginOf, planFirstIndex, recordGitOrigin, recordPlainOrigin, writeFirstIndex, type OriginRecord} from '../git/origin.js'
import {HELPER_PATH, lockedFiles, statPairs, type StatPairs} from '../native/helper.js'
import {loadConfig, settingsFor, type Effective} from '../sandbox/config.js'
import {launch, type Launch, type Outcome} from '../platform/launch.js'
import {checkSandboxAvailable, policyFor} from '../platform/confine.js'
import {currentPlatform} from '../platform/index.js'
import {canonical, isWithin, writableHolding, type Platform, type SandboxPolicy} from '../sandbox/policy.js'
import {HmmError, say, stopwatch} from '../ui/errors.js'
import {progressLine} from '../ui/progress.js'
import {Context} from '../workspaces/context.js'
import {newId} from '../workspaces/ids.js'
import {checkName} from '../workspaces/names.js'
import {removeWorkspace} from '../workspaces/remove.js'
import {Workspace} from '../workspaces/workspace.js'

export interface RunRequest {
  name?: string
  writable: string[]
  removeAfter: boolean
  /** The command and its arguments; empty: the user's shell. */
  command: string[]
}

/** Everything that can be checked before anything is made. */
function checkRequest(context: Context, request: RunRequest, platform: Platform, settings: Effective): string[] {
  if (request.name !== undefined) checkName(request.name)
  const writable = request.writable.map(path => {
    if (!existsSync(path)) throw new HmmError(`${path} does not exist`)
    return canonical(path)
  })
  // The config file's paths need not exist on every machine it is used on: a missing one grants nothing.
  writable.push(...settings.write.map(canonical))
  const data = canonical(context.data)
  if (isWithin(context.origin, data)) {
    throw new HmmError(`${context.origin} is inside hmm's data directory ${data}; run hmm in a project directory`)
  }
  if (isWithin(data, context.origin)) {
    throw new HmmError(`${context.origin} holds hmm's data directory ${data}, so it cannot be cloned; run hmm in a project directory or set HMM_HOME`)
  }
  checkSandboxAvailable(platform)
  // The tree is not known yet; it does not matter here (writableHolding leaves it aside).
  checkOwnFilesOutOfReach(policyFor(platform, {tree: context.data, dataDir: context.data, writable}))
  return writable
}

/** Records the origin and clones it into the tree. */
async function makeTree(workspace: Workspace, signal: AbortSignal): Promise<OriginRecord & {originKind: 'git' | 'plain'}> {
  const origin = workspace.row.origin
  const timing = stopwatch()
  const repoOfOrigin = await gitOriginOf(origin)
  const recorded = repoOfOrigin ? (await recordGitOrigin(origin, repoOfOrigin, workspace.gitDir)).record : undefined
  const firstIndex = repoOfOrigin && planFirstIndex(workspace.gitDir, repoOfOrigin.objectFormat)
  timing.lap('recorded the origin')
  mkdirSync(dirname(workspace.tree), {recursive: true})
  const progress = progressLine(`cloning ${origin}`)
  let stats: StatPairs | undefined
  try {
    stats = await cloneTree(origin, workspace.tree, {signal, onProgress: progress?.update, statPaths: firstIndex?.paths})
  } finally {
    progress?.done()
  }
  timing.lap('cloned')
  const treeMade = Date.now()
  if (repoOfOrigin && recorded) {
    if (firstIndex) writeFirstIndex(firstIndex, stats ?? statPairs(origin, workspace.tree, firstIndex.paths))
    timing.lap('indexed the clone')
    await tickAfter(treeMade)
    return {...recorded, originKind: 'git'}
  }
  mkdirSync(dirname(workspace.base), {recursive: true})
  const record = await recordPlainOrigin(workspace.gitDir, workspace.tree, workspace.base, (from, to) => cloneTree(from, to, {signal}))
  timing.lap('recorded the clone and its base')
  await tickAfter(treeMade)
  return {...record, originKind: 'plain'}
}

/** Longer than a tick of the kernel's coarse clock (HZ 100: 10 ms), which stamps ctimes. */
const CLOCK_TICK_MS = 20

/**
 * Waits, if need be, until a clock tick has passed since the tree was made:
 * then any file the command changes gets a ctime no cloned file has, which
 * lets the first index keep the clone's stat data (index-trust.ts).
 */
async function tickAfter(treeMade: number): Promise<void> {
  const wait = treeMade + CLOCK_TICK_MS - Date.now()
  if (wait > 0) await sleep(wait)
}

/**
 * Refuses to run a command that could rewrite hmm itself or the Node that
 * runs it (hmm run from `npx`, whose cache is writable; a -w or TMPDIR
 * above them): the next hmm, run outside any sandbox, would run its code.
 */
function checkOwnFilesOutOfReach(policy: SandboxPolicy): void {
  const own = [
    ['hmm', canonical(join(dirname(HELPER_PATH), '..', '..'))],
    ['node', canonical(process.execPath)],
  ]
  for (const [what, path] of own) {
    const writable = writableHolding(policy, path)
    if (writable) throw new HmmError(`${what} is installed in ${path}, which the sandboxed command could write (${writable}); install ${what} elsewhere`)
  }
}

function signalNumber(signal: NodeJS.Signals): number {
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
 * Ctrl-\) reach the command directly when it shares the terminal, so they
 * are passed on only when hmm's stdin is not one; window resizes always
 * reach it directly and are not handled at all.
 */
const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']
const FROM_TERMINAL = new Set<NodeJS.Signals>(['SIGINT', 'SIGQUIT'])
/** Signals that, while the tree is still being made, mean "give up". */
const ABORTING = new Set<NodeJS.Signals>(['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT'])

export async function runWorkspace(request: RunRequest): Promise<number> {
  const context = new Context()
  const platform = currentPlatform()
  const command = request.command.length > 0 ? request.command : [process.env.SHELL || '/bin/sh']
  const settings = settingsFor(loadConfig(), command)
  const writable = checkRequest(context, request, platform, settings)
  const store = context.store
  const workspace = new Workspace(store.reserve({name: request.name ?? null, origin: context.origin, command}, newId), context.data)
  mkdirSync(workspace.root, {recursive: true, mode: 0o700})
  writeFileSync(workspace.lock, '')

  const running: Launch = launch({
    platform,
    policy: policyFor(platform, {tree: workspace.tree, dataDir: context.data, writable}),
    lock: workspace.lock,
    cwd: workspace.tree,
    command,
    env: {...process.env, CLAUDE_CODE_SANDBOXED: '1'},
  })

  // While the tree is being made, a signal means: give up and leave nothing behind.
  const making = new AbortController()
  let creating = true
  let interruptedBy: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (creating) {
      if (!ABORTING.has(signal)) return
      interruptedBy ??= signal
      making.abort()
      return
    }
    if (FROM_TERMINAL.has(signal) && process.stdin.isTTY) return
    running.child.kill(signal)
  }
  for (const signal of FORWARDED) process.on(signal, onSignal)

  try {
    const record = await makeTree(workspace, making.signal)
    if (interruptedBy) throw new HmmError(`interrupted`)
    store.update(workspace.id, {state: 'ready', ...record})
  } catch (error) {
    running.abort()
    await running.outcome.catch(() => undefined)
    await removeWorkspace(store, workspace).catch(() => undefined)
    for (const signal of FORWARDED) process.off(signal, onSignal)
    if (interruptedBy) return 128 + signalNumber(interruptedBy)
    throw error
  }
  creating = false

  const line = `workspace ${workspace.label}: ${workspace.tree}`
  say(line)
  running.go()
  const outcome = await running.outcome
  for (const signal of FORWARDED) process.off(signal, onSignal)
  const status = statusOf(outcome, command)

  if (request.removeAfter) {
    await removeWorkspace(store, workspace)
  } else {
    // Something the command left running may still hold the lock: then it still runs.
    if (!lockedFiles([workspace.lock])[0]) store.update(workspace.id, {active: false})
    say(line)
  }
  return status
}
