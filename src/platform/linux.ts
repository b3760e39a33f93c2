// The policy as the helper's arguments: Landlock rules it applies right
// before exec and namespaces (see native-helpers/exec.c, landlock.c, isolate.c). Pure: building the argv is
// separate from running it, so `hmm sandbox` shows exactly what `hmm run` does.
import {join} from 'node:path'
import {isWithin, unique} from '../sandbox/paths.js'
import {hostsMark, type Isolation, type SandboxPolicy} from '../sandbox/policy.js'

export interface HelperControl {
  lock: string
  /** Descriptor the helper reports its own set-up failures on. */
  reportFd: number
  /** Descriptor the helper waits on for the go-ahead (the tree is made meanwhile). */
  waitFd: number
  /** Directory the command starts in. */
  chdir: string
  /**
   * The top of the tree chdir lies in, which the command controls: the helper reaches chdir from it through
   * directories alone, or starts the command there (native-helpers/exec.c enter_start).
   */
  chdirTop?: string
  /** The workspace's directory, for its own /tmp and cache layers; without it, no namespaces. */
  workspace?: string
  /**
   * With the proxy network: the port the command reaches it on, (Linux) hmm's proxy's abstract socket, and whether
   * the helper's bridge says why it could not connect to a host (HMM_DEBUG: it dials for the proxy).
   */
  proxy?: {port: number; socket?: string; debug?: boolean}
  /** In namespaces: whatever the command leaves running is ended with it (hmm's own confined programs). */
  endWithCommand?: boolean
  /** The file the command's first word names, found outside (an agent's: programs.ts agentProgram); absent, looked up on PATH inside. */
  program?: string
  /** A background run's directory: the helper keeps the command's pty there (native-helpers/background.c). */
  background?: string
}

/**
 * The composed home as Landlock rules (policy.ts SandboxPolicy.home): the
 * home hidden, each kept place granted back (grants are a union; the
 * hidden paths inside one are walked around, native-helpers/landlock.c).
 * Not a kept place that is hidden itself or lies in one (a secret, a file a
 * cleaned copy stands for): a grant on the path itself would win over it.
 */
function homeRules(policy: SandboxPolicy): string[] {
  const home = policy.home
  if (!home) return []
  const kept = home.keep.map(entry => entry.path).filter(path => !policy.hidden.some(hidden => isWithin(path, hidden)))
  return ['--hide', home.dir, ...kept.flatMap(path => ['--read', path])]
}

export function landlockArgs(policy: SandboxPolicy): string[] {
  return [
    ...policy.readable.flatMap(path => ['--read', path]),
    ...homeRules(policy),
    ...[...policy.writable, policy.tree].flatMap(path => ['--write', path]),
    ...policy.devices.flatMap(path => ['--dev', path]),
    ...policy.hidden.flatMap(path => ['--hide', path]),
    // The caches are written in place (no overlay keeps the command's writes): the places in them that hold programs are not.
    ...policy.readOnly.flatMap(path => ['--read-only', path]),
    // And where programs outside look for a socket, only plain files and directories may be made (policy.ts CACHE_RENDEZVOUS).
    ...policy.plainOnly.flatMap(path => ['--plain-only', path]),
  ]
}

/** The namespaces (native-helpers/isolate.c): the workspace's own /tmp, caches, no session sockets, no other workspace. */
export function isolationArgs(policy: SandboxPolicy, control: HelperControl): string[] {
  const isolation = policy.isolation
  const workspace = control.workspace
  if (!isolation || !workspace) return []
  return [
    '--isolate',
    workspace,
    ...isolation.temp.flatMap(path => ['--tmp-over', path]),
    ...isolation.caches.flatMap(path => ['--cache', path]),
    // An agent's layers apart from other commands' (policy.ts Isolation.agent).
    ...(isolation.agent === undefined ? [] : ['--layers', `caches-${isolation.agent}`]),
    ...isolation.masked.flatMap(path => ['--mask', path]),
    '--cover-data',
    isolation.data,
    ...(isolation.binds ?? []).flatMap(bind => ['--bind-src', bind.source, '--bind-dst', bind.target]),
    ...homeArgs(isolation, workspace),
    ...(control.endWithCommand ? ['--end-with-command'] : []),
    ...(control.background === undefined ? [] : ['--background', control.background]),
  ]
}

/**
 * The composed home (native-helpers/home.c): what policy.ts kept, and
 * what is known only once the workspace is made: its tree and
 * the files bound over the user's (git's and an agent's, cleaned copies).
 */
function homeArgs(isolation: Isolation, workspace: string): string[] {
  const home = isolation.home
  if (!home) return []
  const beneath = (path: string) => isWithin(path, home.dir) && path !== home.dir
  // Of the workspace's directory, its tree: the rest is hmm's (its lock, private repository, layers' uppers).
  const keep = unique([...home.keep.map(entry => entry.path), join(workspace, 'tree'), ...(isolation.binds ?? []).map(bind => bind.target)].filter(beneath))
  return ['--home', home.dir, ...keep.flatMap(path => ['--home-keep', path]), ...home.links.flatMap(link => ['--home-link', link])]
}

/**
 * The network namespace (native-helpers/net.c): only loopback, and with the
 * proxy its port bridged to hmm's proxy, the host list marked for hmm exec
 * (marks.c). Needs the namespaces.
 */
export function networkArgs(policy: SandboxPolicy, proxy: HelperControl['proxy']): string[] {
  const network = policy.network
  if (!network) return []
  if (network.kind === 'none') return ['--net', 'none']
  if (!proxy?.socket) throw new Error('the proxy network needs the proxy')
  // prettier-ignore
  return [
    '--net', 'proxy', '--proxy-port', String(proxy.port), '--proxy-socket', proxy.socket,
    '--net-mark', String(hostsMark(network.hosts)),
    ...(proxy.debug ? ['--proxy-debug'] : []),
  ]
}

/** `hmm-helper exec` with its control flags, then the confinement rules, then the command. */
export function helperExecArgv(control: HelperControl, rules: string[], command: string[]): string[] {
  // Flags and their values in pairs.
  // prettier-ignore
  return [
    'exec',
    '--lock', control.lock,
    '--report-fd', String(control.reportFd),
    '--wait-fd', String(control.waitFd),
    '--chdir', control.chdir,
    ...(control.chdirTop ? ['--chdir-top', control.chdirTop] : []),
    ...(control.program ? ['--program', control.program] : []),
    ...rules,
    '--',
    ...command,
  ]
}
