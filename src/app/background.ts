// `hmm run -d` and `hmm exec -d`: the run goes on in a hmm of its own, in a
// session of its own, that makes the workspace (run) and starts the command
// exactly as `hmm run`/`exec` does, then waits for the command and records
// its end (WORK) with nobody attached. The command's terminal is the helper's (native-helpers/
// background.c). The hmm the user started relays what the background one
// says until the command has started (its errors, the workspace line, with
// their exit status) and returns then.
import {spawn} from 'node:child_process'
import {closeSync, mkdirSync, openSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import type {Readable} from 'node:stream'
import {lockedFiles} from '../native/helper.js'
import {HmmError} from '../ui/errors.js'
import type {Workspace} from '../workspaces/workspace.js'

/** Set in the environment of the hmm that runs in the background (removed before anything reads it). */
const MARK = 'HMM_BACKGROUND_RUN'
/** Where that hmm says it has started the command. */
const STARTED_FD = 3

/** Whether this hmm is the background half of `hmm run -d` or `hmm exec -d` (and forgets the mark, so the command never sees it). */
export function isBackgroundRun(): boolean {
  const is = process.env[MARK] === '1'
  delete process.env[MARK]
  return is
}

/** Refuses -d where the helper keeps no pty: without the namespaces (Landlock alone) or off Linux. */
export function checkBackgroundPossible(isolation: string, platform: string, command: 'run' | 'exec'): void {
  if (platform !== 'linux' || isolation !== 'full') throw new HmmError(`hmm ${command} -d needs the namespaces (isolation = "full", on Linux)`)
}

/**
 * For `hmm exec -d`: makes the workspace's background directory if an
 * earlier run did not, which one background run at a time keeps (its pty, scrollback and socket: attach and peek take a
 * workspace, not a run). The keeper holds bg/lock while it lives
 * (native-helpers/background.c), which also refuses a second one that
 * got past this check at the same time.
 */
export function prepareBackground(workspace: Workspace): void {
  mkdirSync(workspace.background, {recursive: true, mode: 0o700})
  if (lockedFiles([join(workspace.background, 'lock')])[0]) {
    throw new HmmError(`workspace ${workspace.label} already runs a command in the background (hmm attach ${workspace.row.name ?? workspace.id})`)
  }
}

/**
 * The environment with NODE_EXTRA_CA_CERTS moved aside, as bin/run.js's
 * first line moves it: Node before 23 reads every certificate it names as it
 * starts (40-50 ms for a system's bundle), and hmm makes no TLS connection
 * of its own. bin/run.js puts it back before anything reads the environment.
 */
function withCertificatesDeferred(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const {NODE_EXTRA_CA_CERTS: certificates, ...rest} = env
  return certificates ? {...rest, HMM_NODE_EXTRA_CA_CERTS: certificates} : env
}

/** Starts this same hmm command in the background and relays what it says until the command has started; its exit status. */
export async function runDetached(): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: {...withCertificatesDeferred(process.env), [MARK]: '1'},
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const exited = new Promise<number>(resolve => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
  const spawnFailed = new Promise<never>((_, reject) =>
    child.on('error', error => reject(new HmmError(`could not start hmm in the background: ${error.message}`))),
  )
  const said = new Promise<void>(resolve => child.stderr!.on('end', resolve))
  child.stderr!.pipe(process.stderr, {end: false})
  let started = ''
  const report = child.stdio[STARTED_FD] as Readable
  report.on('data', (chunk: Buffer) => (started += chunk.toString()))
  const reported = new Promise<void>(resolve => report.on('close', () => resolve()))
  await Promise.race([Promise.all([said, reported]), spawnFailed])
  if (started !== 'started') return Promise.race([exited, spawnFailed])
  // Let go of it only now: unreferenced before its exit came, a failed start would end this hmm with status 0.
  child.unref()
  return 0
}

/**
 * The background hmm has started the command: tells the hmm that waits,
 * and from here on says nothing (stderr goes nowhere: the one who read it
 * has returned).
 */
export function saidStarted(): void {
  writeSync(STARTED_FD, 'started')
  closeSync(STARTED_FD)
  closeSync(2)
  // The lowest free descriptor: 2 again, so what is said later is written to nothing.
  openSync('/dev/null', 'w')
}
