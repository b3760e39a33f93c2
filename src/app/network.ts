// The network of one command (SPEC "Network"). With --net HOST,...: hmm's
// proxy (net/proxy.ts), one per command, listening for as long as the
// command runs; how the helper reaches it; what the command is told in its
// environment; and, when the command has ended, the hosts it was refused.
import {randomBytes} from 'node:crypto'
import {parseRules} from '../net/hosts.js'
import type {Proxy} from '../net/proxy.js'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'
import {canonical} from '../sandbox/paths.js'
import type {Bind, Network, Platform} from '../sandbox/policy.js'
import {debugEnabled, say} from '../ui/errors.js'

/**
 * The port the proxy is reached on inside the command's own network
 * namespace (Linux), where no other program listens: the helper bridges it
 * to the proxy's unix socket outside. Squid's port, recognisable in the
 * command's environment.
 */
export const INSIDE_PORT = 3128

/** Refused hosts named in the last line; the rest are counted. */
const NAMED_AT_MOST = 20

export interface CommandNetwork {
  /** For the helper: the port the command reaches the proxy on, (Linux) the proxy's abstract socket, and HMM_DEBUG. */
  proxy?: {port: number; socket?: string; debug?: boolean}
  /** What the command is told: the proxy variables. */
  env: Record<string, string>
  /** Stops the proxy (ending its connections) and names the hosts it refused. */
  finish(): Promise<void>
}

/** The proxy's variables, upper and lower case, as tools read one or the other. */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`
  const env: Record<string, string> = {}
  for (const [name, value] of [
    ['HTTP_PROXY', url],
    ['HTTPS_PROXY', url],
    ['ALL_PROXY', url],
    // The command's own servers on its loopback are reached directly.
    ['NO_PROXY', 'localhost,127.0.0.1'],
  ]) {
    env[name] = value
    env[name.toLowerCase()] = value
  }
  return env
}

/** `hmm: refused connections to 2 hosts: evil.example, 10.0.0.7` (SPEC), or nothing. */
export function refusedLine(refused: {named: string[]; count: number}): string | undefined {
  if (refused.count === 0) return undefined
  const named = refused.named.slice(0, NAMED_AT_MOST)
  const more = refused.count - named.length
  return `refused connections to ${refused.count} host${refused.count === 1 ? '' : 's'}: ${named.join(', ')}${more > 0 ? `, and ${more} more` : ''}`
}

/**
 * Name lookups under --net: nothing can reach a name server, and glibc
 * calls that a temporary failure (EAI_AGAIN), which package managers retry
 * for minutes. The command reads a copy of /etc/nsswitch.conf that asks
 * /etc/hosts only, so a name it does not list is "no such host"
 * (EAI_NONAME) at once; resolvers that read /etc/resolv.conf themselves
 * (c-ares, Go's) are given the loopback, where nothing answers. Made in
 * the workspace's directory `root`, bound over the system's files (where
 * their links lead); none where a file is not there.
 */
export function lookupBinds(root: string, network: Network | undefined): Bind[] {
  if (!network) return []
  const files: Array<[string, (text: string) => string]> = [
    ['/etc/nsswitch.conf', text => (/^\s*hosts\s*:/m.test(text) ? text.replace(/^(\s*hosts\s*:).*$/m, '$1 files') : `${text}\nhosts: files\n`)],
    ['/etc/resolv.conf', () => `# hmm: no name server under --net (SPEC "Network")\nnameserver 127.0.0.1\noptions attempts:1 timeout:1\n`],
  ]
  const binds: Bind[] = []
  for (const [file, rewrite] of files) {
    const target = canonical(file)
    let text: string
    try {
      text = readFileSync(target, 'utf8')
    } catch {
      continue
    }
    const copy = join(root, basename(file))
    mkdirSync(root, {recursive: true, mode: 0o700})
    writeFileSync(copy, rewrite(text), {mode: 0o644})
    binds.push({source: copy, target})
  }
  return binds
}

/**
 * Under --net none nothing a package manager fetches can come, yet npm
 * retries even "no such host" twice, 70 s in all, and pip five times: told
 * not to, they fail in a second or two. What the user set stays theirs.
 */
const RETRIES = ['npm_config_fetch_retries', 'PIP_RETRIES', 'CARGO_NET_RETRY']

function noRetries(env: NodeJS.ProcessEnv): Record<string, string> {
  const set = new Set(Object.keys(env).map(name => name.toLowerCase()))
  return Object.fromEntries(RETRIES.filter(name => !set.has(name.toLowerCase())).map(name => [name, '0']))
}

/** Starts what the command's network needs: with a host list, the proxy. */
export async function startNetwork(platform: Platform, network: Network | undefined, id: string): Promise<CommandNetwork> {
  if (network?.kind === 'none') return {env: noRetries(process.env), finish: async () => {}}
  if (network?.kind !== 'proxy') return {env: {}, finish: async () => {}}
  const rules = parseRules(network.hosts)
  // Loaded here, for a host list only: with it node:http and node:dns, ~3 ms of every other command's start.
  const {startProxy} = await import('../net/proxy.js')
  let proxy: Proxy
  let reach: NonNullable<CommandNetwork['proxy']>
  if (platform === 'linux') {
    // Abstract: no file to leave behind, and out of reach of every other network namespace.
    const socket = `hmm-proxy-${id}-${randomBytes(8).toString('hex')}`
    proxy = await startProxy(rules, {socket})
    reach = {port: INSIDE_PORT, socket, debug: debugEnabled()}
  } else {
    // macOS has no network namespace: the proxy listens on the loopback, and Seatbelt lets the command reach that port only.
    proxy = await startProxy(rules, {loopback: true})
    reach = {port: proxy.port!}
  }
  let finished: Promise<void> | undefined
  return {
    proxy: reach,
    env: proxyEnv(reach.port),
    finish: () =>
      (finished ??= proxy.close().then(() => {
        const line = refusedLine(proxy.refused())
        if (line) say(line)
      })),
  }
}
