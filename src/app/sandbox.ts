// `hmm sandbox`: the policy `hmm run` would apply here, rendered for audit.
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {HmmError} from '../ui/errors.js'
import {dataDir, defaultPlatform} from '../platform/index.js'
import {workingOrigin} from '../workspaces/context.js'
import {loadConfig, settingsFor} from '../sandbox/config.js'
import {SANDBOX_EXEC, seatbelt} from '../platform/darwin.js'
import {policyFor, sandboxedArgv} from '../platform/confine.js'
import {canonical} from '../sandbox/paths.js'
import type {Platform} from '../sandbox/policy.js'

/** Shell-style quoting, only for display: the real argv is passed without a shell. */
function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`
}

/** `platform`: render as hmm run would there (default: this one). */
export function describeSandbox(options: {platform?: Platform; writable: string[]}): string {
  const platform = options.platform ?? defaultPlatform()
  for (const path of options.writable) if (!existsSync(path)) throw new HmmError(`${path} does not exist`)
  const settings = settingsFor(loadConfig(), [])
  const origin = workingOrigin()
  const data = canonical(dataDir(process.env, platform))
  const tree = join(data, '<id>', 'tree', origin.split('/').pop() || 'root')
  // On macOS /tmp, /var and /etc resolve into /private: the paths are shown as a Mac sees them.
  const policy = policyFor(platform, {tree, dataDir: data, writable: [...options.writable, ...settings.write]})
  const lines = [
    `origin: ${origin}`,
    `workspace tree: ${policy.tree}`,
    'may write:',
    ...[policy.tree, ...policy.writable, ...policy.devices].map(path => `  ${path}`),
    'may not read:',
    ...policy.hidden.map(path => `  ${path}`),
    'may read: everything else',
  ]
  if (platform === 'linux') {
    const argv = sandboxedArgv('linux', policy, {lock: join(data, '<id>', 'lock'), reportFd: 3, waitFd: 4, chdir: policy.tree}, ['COMMAND...'])
    lines.push('enforced by Landlock, applied by the helper just before exec:', `  hmm-helper ${argv.map(quote).join(' ')}`)
  } else {
    const {profile, parameters} = seatbelt(policy)
    lines.push(
      'enforced by Seatbelt: sandbox-exec runs the command under PROFILE, with one -D per parameter:',
      `  ${SANDBOX_EXEC} -p PROFILE -DNAME=VALUE... -- COMMAND...`,
      'parameters (NAME=VALUE):',
      ...parameters.map(({name, value}) => `  ${quote(`${name}=${value}`)}`),
      'PROFILE:',
      ...profile
        .trimEnd()
        .split('\n')
        .map(line => (line ? `  ${line}` : '')),
    )
  }
  return lines.join('\n') + '\n'
}
