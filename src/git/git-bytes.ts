// git whose output is bytes, not text: patches (binary files in them must
// come out byte for byte) and anything piped on unchanged.
//
// Security: the same stance as git.ts, whose scrubbed environment this uses:
// git runs outside the sandbox only on the origin's repository or hmm's
// private one, never on the workspace's `.git`.
import {execa} from 'execa'
import {HmmError} from '../ui/errors.js'
import {scrubbedEnv, type GitOptions} from './git.js'

export interface GitBytesResult {
  stdout: Buffer
  stderr: string
  exitCode: number
}

/** The subcommand's name, skipping `-c key=value` and other leading options. */
export function subcommand(args: string[]): string {
  for (let index = 0; index < args.length; index++) {
    if (args[index] === '-c' || args[index] === '-C') index++
    else if (!args[index].startsWith('-')) return args[index]
  }
  return ''
}

export async function gitBytes(args: string[], options: Omit<GitOptions, 'encoding'>): Promise<GitBytesResult> {
  const result = await execa('git', args, {
    cwd: options.cwd,
    env: scrubbedEnv(options.env),
    extendEnv: false,
    input: options.input,
    reject: false,
    stripFinalNewline: false,
    encoding: 'buffer',
    maxBuffer: Number.MAX_SAFE_INTEGER,
  })
  const exitCode = result.exitCode ?? 1
  const stderr = Buffer.from(result.stderr as Uint8Array).toString('utf8')
  if (result.failed && !(options.okStatuses ?? []).includes(exitCode)) {
    if ((result as {code?: string}).code === 'ENOENT') throw new HmmError('git is not installed (hmm needs git on PATH)')
    const reason = stderr.trim().split('\n').at(-1) || `exit status ${exitCode}`
    throw new HmmError(`git ${subcommand(args)} failed: ${reason}`)
  }
  return {stdout: Buffer.from(result.stdout as Uint8Array), stderr, exitCode}
}
