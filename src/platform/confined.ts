// Running one of hmm's own programs confined, through the same helper and
// launcher as `hmm run` (launch.ts), and collecting its output: hmm's work
// that reads a workspace, whose files and repository are the command's —
// git reading the tree into hmm's private index (git/changes.ts), `git
// bundle create` on the workspace's repository (git/bundle.ts).
//
// Security: the program reads what the workspace's command may read (the
// secrets, the config file's `hide` and hmm's data directory hidden; its
// tree readable) and writes one directory of hmm's. Where the command has
// namespaces, so does the program (the workspace's /tmp, none of the user's
// session sockets), and whatever it leaves running ends with it: so no
// link or race in the tree, no setting in the repository, makes it read a
// secret, write elsewhere, reach the user's other programs or the network
// (it needs none). It gets no terminal (a new session, stdin closed), no
// descriptor of hmm's but its pipes, only the environment the caller
// passes. Its output is untrusted data.
import type {Readable} from 'node:stream'
import {join} from 'node:path'
import {watchFifoWaits} from './fifo-watch.js'
import {debug} from '../ui/errors.js'
import {helperPath} from '../native/helper.js'
import {launch, launchArgv, type Confinement, type Launch, type Outcome} from './launch.js'
import {policyFor} from './confine.js'
import {currentPlatform} from './index.js'
import {loadConfig} from '../sandbox/config.js'
import {canonical} from '../sandbox/paths.js'
import type {SandboxPolicy} from '../sandbox/policy.js'

/** How long output may trail the program's exit. */
const OUTPUT_GRACE_MS = 1000

/** Where and how a program reading a workspace runs. */
export interface Reader {
  policy: SandboxPolicy
  /** The workspace's directory for namespaces (its /tmp), or undefined where the user opted out of them. */
  namespaces: string | undefined
  /** The lock the helper takes (not the workspace's: that one means "running"). */
  lock: string
}

/**
 * What a program reading a workspace may read, by the config file: the
 * hidden paths of every table (a program of hmm's serves every agent), the
 * top level's `unhide`; no namespaces where any table opted out of them.
 */
function readerSettings(): {hide: string[]; unhide: string[]; namespaces: boolean} {
  const config = loadConfig()
  const tables = [config.all, ...Object.values(config.agents)]
  return {
    hide: tables.flatMap(table => table.hide ?? []),
    unhide: config.all.unhide ?? [],
    namespaces: tables.every(table => table.isolation !== 'landlock-only'),
  }
}

/**
 * A program that reads the workspace's tree (and repository), as its
 * command may, and writes only `writes` (a directory of hmm's); of the
 * home it reads only `shown` besides the workspace.
 */
export function readerOf(workspace: {tree: string; root: string}, dataDir: string, writes: string, shown: string[]): Reader {
  const settings = readerSettings()
  const platform = currentPlatform()
  // No network: git reading files needs none (on Linux its barrier is a namespace: none where opted out of them).
  const network = settings.namespaces || platform === 'darwin' ? {kind: 'none' as const} : undefined
  // Its home is composed as the command's is (sandbox/home.ts: by the helper with the namespaces, else as rules), of the
  // tree, what it writes and what else git reads there (`shown`: the objects the private repository borrows, the user's
  // excludes file). Were it the whole home, the workspace's repository could steer it to any file of it (alternates).
  // And the helper, which git's steps run between them (git/changes.ts CHECKED_ADD): hmm cloned into ~/hmm has it there.
  const compose = {show: [...settings.unhide, ...shown, workspace.tree, writes, helperPath()], path: [], programs: []}
  const normal = policyFor(platform, {
    tree: workspace.tree,
    dataDir,
    writable: [],
    hide: settings.hide,
    unhide: settings.unhide,
    network,
    namespaces: settings.namespaces,
    compose,
  })
  return {
    policy: {
      tree: canonical(writes),
      readable: [...normal.readable, normal.tree],
      writable: [],
      readOnly: [],
      plainOnly: [],
      devices: normal.devices,
      hidden: normal.hidden,
      ...(normal.home ? {home: normal.home} : {}),
      ...(normal.network ? {network: normal.network} : {}),
      // Its own /tmp, none of the session's sockets; the caches are read as they are, written by nobody.
      ...(normal.isolation ? {isolation: {...normal.isolation, caches: []}} : {}),
    },
    namespaces: settings.namespaces ? canonical(workspace.root) : undefined,
    lock: join(workspace.root, 'reader.lock'),
  }
}

export interface ConfinedRequest {
  reader: Reader
  cwd: string
  command: string[]
  env: Record<string, string>
  /** The program reads pipes of its own (a child's output: git bundle's pack-objects), so only waits to open a FIFO count as stuck. */
  readsPipes: boolean
  /** Called when the program is found stuck on a FIFO, before it is stopped. */
  onStuck?: (pid: number) => void
  /** Output beyond this is dropped (default: none dropped). */
  maxOutput?: number
  /** Shells between the helper and the programs that read (a script of git's steps): they only wait for them. Default 0. */
  shells?: number
}

export interface ConfinedResult {
  outcome: Outcome
  stdout: Buffer
  stderr: string
  /** The program was stopped: it stayed waiting to open a FIFO (see platform/fifo-watch.ts). */
  stuckOnFifo: boolean
}

function collect(stream: Readable, max: number): () => Buffer {
  const chunks: Buffer[] = []
  let size = 0
  stream.on('data', (chunk: Buffer) => {
    if (size < max) chunks.push(chunk)
    size += chunk.length
  })
  return () => Buffer.concat(chunks).subarray(0, max)
}

function confinementOf(request: Pick<ConfinedRequest, 'reader' | 'cwd' | 'command'>): Confinement {
  const {reader} = request
  return {
    platform: currentPlatform(),
    policy: reader.policy,
    workspace: reader.namespaces,
    lock: reader.lock,
    cwd: request.cwd,
    command: request.command,
    endWithCommand: reader.namespaces !== undefined,
  }
}

/** The program's whole start as the helper gets it: what a launch prepared ahead must equal to be used. */
function startKey(confinement: Confinement, env: Record<string, string>): string {
  return JSON.stringify([launchArgv(confinement), env])
}

/** The launch prepareConfined made: started, held before the go-ahead. */
let prepared: {key: string; running: Launch} | undefined

function dropPrepared(): void {
  prepared?.running.abort()
  prepared = undefined
}

/**
 * Starts the helper for a program hmm is about to run confined (its first
 * git reading the workspace after a command), held before the go-ahead: its
 * namespaces and the mounts that need nothing of the program are made while
 * hmm does the rest of its work meanwhile. runConfined uses it for a request
 * whose argv, environment and directory are the same, byte for byte, and
 * drops it otherwise (the helper then exits without running anything), so
 * the program runs exactly as it would have. Landlock and the read-only
 * pass are applied at the go-ahead, as for any launch. Unused, it keeps hmm
 * from exiting no longer than any idle descriptor: its pipes close with hmm.
 */
export function prepareConfined(request: Pick<ConfinedRequest, 'reader' | 'cwd' | 'command' | 'env'>): void {
  const confinement = confinementOf(request)
  const key = startKey(confinement, request.env)
  // The same start, prepared already: kept.
  if (prepared?.key === key) return
  dropPrepared()
  const running = launch(confinement, {env: request.env, io: 'pipe', detached: true})
  idle(running.child, false)
  running.outcome.catch(() => undefined)
  prepared = {key, running}
}

/** Whether a child (and its pipes) keeps hmm's event loop alive. */
function idle(child: Launch['child'], busy: boolean): void {
  for (const handle of [child, ...child.stdio]) {
    const refs = handle as {ref?: () => void; unref?: () => void} | null
    if (busy) refs?.ref?.()
    else refs?.unref?.()
  }
}

export async function runConfined(request: ConfinedRequest): Promise<ConfinedResult> {
  const {reader} = request
  const confinement = confinementOf(request)
  const ahead = prepared?.key === startKey(confinement, request.env) ? prepared.running : undefined
  debug(`confined: ${helperPath()} ${launchArgv(confinement).join(' ')}${ahead ? ' (set up ahead)' : ''}`)
  if (ahead) prepared = undefined
  else dropPrepared()
  const running = ahead ?? launch(confinement, {env: request.env, io: 'pipe', detached: true})
  if (ahead) idle(ahead.child, true)
  const child = running.child
  const max = request.maxOutput ?? Number.MAX_SAFE_INTEGER
  const stdout = collect(child.stdout!, max)
  const stderr = collect(child.stderr!, max)
  const closed = (stream: Readable) => new Promise<void>(resolve => stream.on('close', () => resolve()))
  const outputClosed = Promise.all([closed(child.stdout!), closed(child.stderr!)])
  running.go()
  // The whole group (detached: its own): the program's children too, and without namespaces what it left running.
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      child.kill('SIGKILL')
    }
  }
  // hmm exiting: the program goes too.
  process.once('exit', stop)
  let stuckOnFifo = false
  const stopWatching = watchFifoWaits(
    child.pid,
    () => {
      stuckOnFifo = true
      request.onStuck?.(child.pid!)
      stop()
    },
    // The helper waits for the program, its namespace's init (isolate.c isolate_command_is_init), or without namespaces for the keeper (native-helpers/keeper.c), which waits for it.
    {readsPipes: request.readsPipes, wrappers: (reader.namespaces ? 1 : 2) + (request.shells ?? 0)},
  )
  try {
    const outcome = await running.outcome
    // Something the program left running may hold its output open: do not wait for it.
    await Promise.race([outputClosed, new Promise(resolve => setTimeout(resolve, OUTPUT_GRACE_MS).unref())])
    stop()
    child.stdout!.destroy()
    child.stderr!.destroy()
    return {outcome, stdout: stdout(), stderr: stderr().toString('utf8'), stuckOnFifo}
  } finally {
    stopWatching()
    process.off('exit', stop)
  }
}
