// How a platform confines a command: on Linux the
// helper applies Landlock itself; on macOS the helper (which still takes
// the lock and closes descriptors) execs sandbox-exec with the Seatbelt
// profile, which execs the command.
import {existsSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {HmmError} from '../ui/errors.js'
import {landlockAbi} from '../native/helper.js'
import {SANDBOX_EXEC, darwinPolicy, seatbeltArgv} from './darwin.js'
import {helperExecArgv, landlockArgs, type HelperControl} from './linux.js'
import {buildPolicy, type Platform, type SandboxPolicy} from '../sandbox/policy.js'

/** Landlock ABI 2 brought REFER: without it a sandboxed rename across directories fails. */
const MIN_LANDLOCK_ABI = 2

/** Refuses, before anything is made, where the sandbox cannot work. */
export function checkSandboxAvailable(platform: Platform): void {
  if (platform === 'darwin') {
    if (!existsSync(SANDBOX_EXEC)) throw new HmmError(`the sandbox needs ${SANDBOX_EXEC}, which this Mac does not have`)
    return
  }
  const abi = landlockAbi()
  if (abi < MIN_LANDLOCK_ABI) {
    const has = abi === 0 ? 'Landlock is not enabled in this kernel' : `this kernel has Landlock ABI ${abi}`
    throw new HmmError(`the sandbox needs Landlock ABI ${MIN_LANDLOCK_ABI} or later (Linux 5.19+); ${has}`)
  }
}

/** The policy as the platform sees it (macOS: /tmp is /private/tmp, ...). */
export function platformPolicy(platform: Platform, policy: SandboxPolicy): SandboxPolicy {
  return platform === 'darwin' ? darwinPolicy(policy) : policy
}

/** The helper's whole argv for running the command confined. */
export function sandboxedArgv(platform: Platform, policy: SandboxPolicy, control: HelperControl, command: string[]): string[] {
  return platform === 'darwin' ? helperExecArgv(control, [], seatbeltArgv(policy, command)) : helperExecArgv(control, landlockArgs(policy), command)
}

/** The policy for a command in `tree`, from this process's environment (HOME, TMPDIR). */
export function policyFor(platform: Platform, options: {tree: string; dataDir: string; writable: string[]}): SandboxPolicy {
  const policy = buildPolicy({
    tree: options.tree,
    home: process.env.HOME || homedir(),
    dataDir: options.dataDir,
    extraWritable: options.writable,
    tmpdir: process.env.TMPDIR || tmpdir(),
    platform,
  })
  return platformPolicy(platform, policy)
}
