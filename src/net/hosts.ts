// Which hosts a command may reach through hmm's proxy (SPEC "Network"): the
// rules as the user writes them (`example.com`, `*.example.com`,
// `example.com:8080`, `10.0.0.7`, `[::1]:8443`), and the one check of a
// request's host and port against them.
//
// Security: a request's host comes from the hostile command. It is judged
// only in its canonical form, the one the WHATWG URL parser gives (lower
// case; punycode; IPv4 in any spelling, 0x7f.1 or 2130706433, as a dotted
// quad; IPv6 compressed), and the proxy connects to exactly that form, so
// no other spelling of a name or address reaches what the rules do not
// name. Anything but letters, digits, `-`, `_` and dots between labels, or
// an IP address, is not a host. An IP address matches only a rule that is
// that address, never a `*.suffix`. A rule allows ports 80 and 443, or only
// the port it names. A name matched only by a `*.suffix` must not resolve to
// the machine itself, link-local (a cloud's metadata service) or private
// addresses (see proxy.ts): whoever runs a subdomain's DNS could point it
// at the user's own services; a name the user wrote out may go anywhere.
import {isIP} from 'node:net'
import {HmmError} from '../ui/errors.js'

export interface HostRule {
  /** The canonical host; for `*.example.com`, `example.com`. */
  host: string
  /** `*.host`: the host's subdomains (not the host itself). */
  wildcard: boolean
  ports: number[]
  /** As written, for messages. */
  text: string
}

/** HTTP's and HTTPS's. */
export const DEFAULT_PORTS = [80, 443]

// No label starts with '-': `hmm run --net -- make` must not take `--` for a host.
const LABELS = /^[a-z0-9_][a-z0-9_-]*(\.[a-z0-9_][a-z0-9_-]*)*$/

/**
 * A host name or IP address in its canonical form (an IPv6 address without
 * brackets), or undefined for anything else.
 */
export function canonicalHost(text: string): string | undefined {
  // What the URL parser would take as user, port, path, query, fragment or an escape, and every space or control.
  if (text === '' || text.length > 255 || /[^\x21-\x7e]|[/?#@\\%]/.test(text)) return undefined
  if (text.includes(':') && !(text.startsWith('[') && text.endsWith(']'))) return undefined
  let host: string
  try {
    host = new URL(`http://${text}/`).hostname
  } catch {
    return undefined
  }
  if (host.startsWith('[')) return isIP(host.slice(1, -1)) === 6 ? host.slice(1, -1) : undefined
  if (isIP(host) === 4) return host
  // One trailing dot (the root) says the same name.
  const name = host.endsWith('.') ? host.slice(0, -1) : host
  return name.length <= 253 && LABELS.test(name) ? name : undefined
}

/** `host[:port]` or `[v6][:port]`, the port checked; undefined when malformed. */
export function splitHostPort(text: string): {host: string; port?: number} | undefined {
  let host = text
  let port: string | undefined
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return undefined
    host = text.slice(0, close + 1)
    const rest = text.slice(close + 1)
    if (rest !== '') {
      if (!rest.startsWith(':')) return undefined
      port = rest.slice(1)
    }
  } else if (text.split(':').length === 2) {
    ;[host, port] = text.split(':')
  }
  if (port === undefined) return {host}
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return undefined
  return {host, port: Number(port)}
}

/** One rule as written in --net or the config file's `net`. */
export function parseRule(text: string): HostRule {
  const bad = () => new HmmError(`net: not a host name, *.domain or IP address (with an optional :PORT): ${text}`)
  const wildcard = text.startsWith('*.')
  const rest = wildcard ? text.slice(2) : text
  // A bare IPv6 address, written as it is copied.
  const split = isIP(rest) === 6 ? {host: `[${rest}]`} : splitHostPort(rest)
  const host = split && canonicalHost(split.host)
  if (!split || !host || (wildcard && isIP(host))) throw bad()
  return {host, wildcard, ports: split.port ? [split.port] : DEFAULT_PORTS, text}
}

export function parseRules(texts: string[]): HostRule[] {
  return texts.map(parseRule)
}

/**
 * How the rules let a request reach this canonical host on this port: by a
 * rule naming it exactly, by a `*.suffix` only, or not at all.
 */
export function reach(rules: HostRule[], host: string, port: number): 'exact' | 'wildcard' | undefined {
  const on = rules.filter(rule => rule.ports.includes(port))
  if (on.some(rule => !rule.wildcard && rule.host === host)) return 'exact'
  if (!isIP(host) && on.some(rule => rule.wildcard && host.endsWith(`.${rule.host}`))) return 'wildcard'
  return undefined
}

export function allows(rules: HostRule[], host: string, port: number): boolean {
  return reach(rules, host, port) !== undefined
}
