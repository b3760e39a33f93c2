// Running one short program under a given sandbox policy, through the same
// helper and the same argv as `hmm run` (sandboxedArgv), and collecting
// its output: hmm's own work that must happen inside a sandbox, such as
// `git bundle create` on a workspace's repository (see git/bundle.ts).
//
// Security: the program gets the policy it is given and nothing else — no
// terminal (a new session, stdin closed, so it cannot push keystrokes into
// the user's terminal), no descriptor of hmm's but its pipes, only the
// environment the caller passes. Its output is untrusted data.
import type {Readable} from 'node:stream'
import {watchFifoWaits} from './fifo-watch.js'
import {debug} from '../ui/errors.js'
import {helperPath} from '../native/helper.js'
import {launch, launchArgv, type Confinement, type Outcome} from './launch.js'
import {currentPlatform} from './index.js'
import type {SandboxPolicy} from '../sandbox/policy.js'

/** More than any message a program like git prints; the rest is dropped. */
const OUTPUT_MAX = 1 << 20
/** How long output may trail the program's exit. */
const OUTPUT_GRACE_MS = 1000

export interface ConfinedRequest {
  policy: SandboxPolicy
  /** The lock the helper takes (not the workspace's: that one means "running"). */
  lock: string
  cwd: string
  command: string[]
  env: Record<string, string>
}

export interface ConfinedResult {
  outcome: Outcome
  stdout: string
  stderr: string
  /** The program was stopped: it stayed waiting to open a FIFO (see platform/fifo-watch.ts). */
  stuckOnFifo: boolean
}

function collect(stream: Readable): () => string {
  const chunks: Buffer[] = []
  let size = 0
  stream.on('data', (chunk: Buffer) => {
    if (size < OUTPUT_MAX) chunks.push(chunk)
    size += chunk.length
  })
  return () => Buffer.concat(chunks).subarray(0, OUTPUT_MAX).toString('utf8')
}

export async function runConfined(request: ConfinedRequest): Promise<ConfinedResult> {
  const confinement: Confinement = {
    platform: currentPlatform(),
    policy: request.policy,
    workspace: undefined,
    lock: request.lock,
    cwd: request.cwd,
    command: request.command,
  }
  debug(`confined: ${helperPath()} ${launchArgv(confinement).join(' ')}`)
  const running = launch(confinement, {env: request.env, io: 'pipe', detached: true})
  const child = running.child
  const stdout = collect(child.stdout!)
  const stderr = collect(child.stderr!)
  const closed = (stream: Readable) => new Promise<void>(resolve => stream.on('close', () => resolve()))
  const outputClosed = Promise.all([closed(child.stdout!), closed(child.stderr!)])
  running.go()
  // hmm exiting: the program goes too.
  const stop = () => child.kill('SIGKILL')
  process.once('exit', stop)
  let stuckOnFifo = false
  // It may run children whose output it reads (git: pack-objects), so only FIFO opens count.
  const stopWatching = watchFifoWaits(
    child.pid,
    () => {
      stuckOnFifo = true
      // The whole group (detached: its own): the program's children may be the ones waiting.
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        stop()
      }
    },
    {readsPipes: true},
  )
  try {
    const outcome = await running.outcome
    // Something the program left running may hold its output open: do not wait for it.
    await Promise.race([outputClosed, new Promise(resolve => setTimeout(resolve, OUTPUT_GRACE_MS).unref())])
    child.stdout!.destroy()
    child.stderr!.destroy()
    return {outcome, stdout: stdout(), stderr: stderr(), stuckOnFifo}
  } finally {
    stopWatching()
    process.off('exit', stop)
  }
}
