// A program hmm runs outside the sandbox (git on the user's or its own
// repositories, the helper's clone, cp), what it says collected. Node's
// spawn, not execa: a command runs a dozen, and execa cost each about 12 ms
// of CPU more (40 starts of /bin/true: 0.62 s raw, 1.07 s with execa); its
// load alone was 6-8 ms of `hmm run`'s start.
import {childProcess} from '../native/helper.js'

/** How a program ended: its status (null: ended by a signal), its stdout and its stderr. */
export interface Collected {
  exitCode: number | null
  stdout: Buffer
  stderr: string
}

/**
 * Runs `file` with `args`: `input` on its stdin (else /dev/null), progress
 * on its descriptor 3 to `onFd3` where given, sent SIGTERM when `signal`
 * aborts (its status then says so). Rejects only where it cannot start.
 */
export function runCollected(
  file: string,
  args: string[],
  options: {cwd?: string; env?: NodeJS.ProcessEnv; input?: Buffer | string; onFd3?: (chunk: Buffer) => void; signal?: AbortSignal} = {},
): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const child = childProcess().spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(options.onFd3 ? ['pipe' as const] : [])],
      signal: options.signal,
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk))
    if (options.onFd3) (child.stdio[3] as NodeJS.ReadableStream).on('data', options.onFd3)
    // Aborted: the program was sent SIGTERM, and 'close' follows.
    child.on('error', error => (error.name === 'AbortError' ? undefined : reject(error)))
    child.on('close', code => resolve({exitCode: code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8')}))
    if (options.input !== undefined) {
      // It may exit before it read all of it (a refusal, a failure): its status says why, not EPIPE.
      child.stdin!.on('error', () => {})
      child.stdin!.end(options.input)
    }
  })
}
