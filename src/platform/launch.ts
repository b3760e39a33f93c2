// Starting the command under the sandbox. The helper takes the workspace's
// lock first and holds it while the tree is made, waits for the go-ahead on
// a pipe, then applies the platform's confinement and execs the command.
// Its own set-up failures come back on another pipe, so "the sandbox could
// not be set up" is never mistaken for "the command exited 1".
import {spawn, type ChildProcess} from 'node:child_process'
import type {Readable, Writable} from 'node:stream'
import {HmmError} from '../ui/errors.js'
import {helperPath} from '../native/helper.js'
import {sandboxedArgv} from './confine.js'
import type {Platform, SandboxPolicy} from '../sandbox/policy.js'

const REPORT_FD = 3
const WAIT_FD = 4

export interface Launch {
  child: ChildProcess
  /** Lets the helper go on to confine and exec the command. */
  go(): void
  /** Tells the helper to give up without running anything. */
  abort(): void
  /** Resolves when the command (or the helper) has exited. */
  outcome: Promise<Outcome>
}

export type Outcome =
  | {kind: 'exited'; status: number}
  | {kind: 'signalled'; signal: NodeJS.Signals}
  | {kind: 'not-started'; status: 126 | 127; reason: string}
  | {kind: 'setup-failed'; reason: string}

/** What the helper wrote on the report descriptor, turned into an outcome. */
export function interpretReport(report: string, code: number | null, signal: NodeJS.Signals | null): Outcome {
  const line = report.split('\n')[0] ?? ''
  if (line.startsWith('setup ')) return {kind: 'setup-failed', reason: line.slice('setup '.length)}
  if (line.startsWith('exec ')) {
    const [, errno, ...words] = line.split(' ')
    const reason = errno === 'ENOENT' ? 'command not found' : words.join(' ').toLowerCase() || errno
    return {kind: 'not-started', status: errno === 'ENOENT' ? 127 : 126, reason}
  }
  if (signal) return {kind: 'signalled', signal}
  return {kind: 'exited', status: code ?? 1}
}

export function launch(options: {
  platform: Platform
  policy: SandboxPolicy
  /** The workspace's directory: namespaces of its own (isolate.c); none when opted out. */
  workspace: string | undefined
  lock: string
  cwd: string
  command: string[]
  env: NodeJS.ProcessEnv
}): Launch {
  const control = {lock: options.lock, reportFd: REPORT_FD, waitFd: WAIT_FD, chdir: options.cwd, workspace: options.workspace}
  const argv = sandboxedArgv(options.platform, options.policy, control, options.command)
  const child = spawn(helperPath(), argv, {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe', 'pipe'],
    env: options.env,
    // The command stays in hmm's process group: Ctrl-C from the terminal reaches it directly.
    detached: false,
  })
  const report = child.stdio[REPORT_FD] as Readable
  const wait = child.stdio[WAIT_FD] as Writable
  wait.on('error', () => {}) // the helper may be gone already; its exit tells why
  let reported = ''
  report.on('data', (chunk: Buffer) => (reported += chunk.toString()))
  const reportClosed = new Promise<void>(resolve => report.on('close', () => resolve()))
  const outcome = new Promise<Outcome>((resolve, reject) => {
    child.on('error', error => reject(new HmmError(`could not start the sandbox helper: ${error.message}`)))
    child.on('exit', (code, signal) => {
      void reportClosed.then(() => resolve(interpretReport(reported, code, signal)))
    })
  })
  return {
    child,
    go: () => wait.end('g'),
    abort: () => wait.destroy(),
    outcome,
  }
}
