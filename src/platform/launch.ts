// The one way hmm starts the helper to run something confined: the command
// of `hmm run`/`exec` (session.ts) and hmm's own confined programs
// (confined.ts), with the same descriptors and the same argv, which
// `hmm sandbox` shows (launchArgv). The helper takes the lock first and
// holds it while hmm gets ready (run makes the tree meanwhile), waits for
// the go-ahead on a pipe, then applies the platform's confinement and
// execs the command. Its own set-up failures come back on another pipe, so
// "the sandbox could not be set up" is never mistaken for "the command
// exited 1".
import {spawn, type ChildProcess, type StdioOptions} from 'node:child_process'
import type {Readable, Writable} from 'node:stream'
import {HmmError} from '../ui/errors.js'
import {helperPath} from '../native/helper.js'
import {sandboxedArgv} from './confine.js'
import type {HelperControl} from './linux.js'
import type {Platform, SandboxPolicy} from '../sandbox/policy.js'

/** The helper's descriptors: it reports its set-up failures on the first and waits for the go-ahead on the second. */
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

/** What to run confined, and how. */
export interface Confinement {
  platform: Platform
  policy: SandboxPolicy
  /** A directory of the workspace's for namespaces of their own (isolate.c: its /tmp, caches); none when opted out. */
  workspace: string | undefined
  /** The lock the helper takes (the workspace's marks it running). */
  lock: string
  /** Where the command starts. */
  cwd: string
  /** The top of the workspace's tree cwd lies in, reached from it without links (linux.ts HelperControl.chdirTop). */
  cwdTop?: string
  command: string[]
  /** With --net HOST,...: where the command reaches hmm's proxy (app/network.ts). */
  proxy?: HelperControl['proxy']
  /** In namespaces: whatever the command leaves running ends with it. */
  endWithCommand?: boolean
  /** The file to run for the command's first word, found outside (an agent's program). */
  program?: string
  /** A background run's directory (hmm run -d): the command's pty is kept there, relayed to nobody. */
  background?: string
}

/** The helper's whole argv for a confinement. */
export function launchArgv(confinement: Confinement): string[] {
  const control = {
    lock: confinement.lock,
    reportFd: REPORT_FD,
    waitFd: WAIT_FD,
    chdir: confinement.cwd,
    chdirTop: confinement.cwdTop,
    workspace: confinement.workspace,
    proxy: confinement.proxy,
    endWithCommand: confinement.endWithCommand,
    program: confinement.program,
    background: confinement.background,
  }
  return sandboxedArgv(confinement.platform, confinement.policy, control, confinement.command)
}

export interface LaunchOptions {
  env: NodeJS.ProcessEnv
  /** The command's stdin, stdout and stderr: hmm's own (the terminal), pipes hmm reads (stdin then closed), or none (a background run's pty). */
  io: 'inherit' | 'pipe' | 'ignore'
  /**
   * A process group of its own (hmm's confined programs), so that it and
   * everything it starts can be stopped at once; otherwise the command stays
   * in hmm's, so Ctrl-C from the terminal reaches it directly.
   */
  detached: boolean
}

export function launch(confinement: Confinement, options: LaunchOptions): Launch {
  const io: StdioOptions = options.io === 'pipe' ? ['ignore', 'pipe', 'pipe'] : [options.io, options.io, options.io]
  const child = spawn(helperPath(), launchArgv(confinement), {
    stdio: [...io, 'pipe', 'pipe'],
    env: options.env,
    detached: options.detached,
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
