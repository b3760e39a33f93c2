// The network of one command (SPEC "Network"). With --net HOST,...: hmm's
// proxy (net/proxy.ts), one per command, listening for as long as the
// command runs; how the helper reaches it; what the command is told in its
// environment; and, when the command has ended, the hosts it was refused.
import {randomBytes} from 'node:crypto'
import {parseRules} from '../net/hosts.js'
import {startProxy, type Proxy} from '../net/proxy.js'
import type {Network, Platform} from '../sandbox/policy.js'
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

/** Starts what the command's network needs: with a host list, the proxy. */
export async function startNetwork(platform: Platform, network: Network | undefined, id: string): Promise<CommandNetwork> {
  if (network?.kind !== 'proxy') return {env: {}, finish: async () => {}}
  const rules = parseRules(network.hosts)
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
