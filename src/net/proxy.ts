// hmm's HTTP and HTTPS proxy (SPEC "Network"): the one way out of a command
// run with --net HOST,..., started outside the sandbox for as long as the
// command runs. No MITM: HTTPS goes through CONNECT, judged by the host name
// the client asks for, and its bytes pass untouched; plain HTTP is judged
// by the request's absolute URL (or its Host header when it has none), and
// is sent on with that host as its Host header, so a request cannot name
// one host and be meant for another. A plain-HTTP upgrade (ws://) is judged
// and sent on the same way; once the host switches protocols, its bytes
// pass untouched both ways, as through CONNECT.
//
// Security: the client is the hostile command. What it sends is parsed by
// Node's HTTP parser with bounded headers and timeouts, its host judged in
// canonical form only (hosts.ts), and every error ends that one connection,
// never the proxy. hmm connects to the host by its name as the client gave
// it (canonical), resolved once (what was found is given again for 2 s),
// connecting to the very address it checked at that use:
// a name the user wrote out reaches whatever its DNS says, on the ports its
// rule allows and no other; a name matched only by a `*.suffix` never
// reaches this machine's own, link-local or private addresses (LOCAL).
// Only allowed names are ever looked up, so a refused name leaks nothing
// through DNS. Everything refused gets a 403 that says why, and its host is
// counted for the line hmm prints at the end.
import {lookup as dnsLookup, type LookupAddress, type LookupOptions} from 'node:dns'
import {createServer, request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse} from 'node:http'
import {BlockList, connect, type AddressInfo, type LookupFunction, type Socket} from 'node:net'
import {networkInterfaces} from 'node:os'
import type {Duplex} from 'node:stream'
import {debug} from '../ui/errors.js'
import {canonicalHost, reach, splitHostPort, type HostRule} from './hosts.js'

/** Bounds on what a client may send or hold open. */
const MAX_HEADER_BYTES = 16 * 1024
const HEADERS_TIMEOUT_MS = 30_000
const CONNECT_TIMEOUT_MS = 30_000
const MAX_CONNECTIONS = 512
/** Refused hosts remembered for the last line; past this many, only counted. */
const MAX_NAMED = 1000

/**
 * This machine and its neighbours: loopback, unspecified, link-local (cloud
 * metadata), private, shared, benchmark, multicast and reserved ranges
 * (IPv4-mapped forms included), and the machine's own addresses.
 */
const LOCAL = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  LOCAL.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  LOCAL.addSubnet(network, prefix, 'ipv6')
let ownAdded = false

/** The ranges, with the machine's own addresses added the first time a name is checked (not at every hmm start). */
function localRanges(): BlockList {
  if (!ownAdded) {
    for (const address of Object.values(networkInterfaces()).flat()) {
      if (address) LOCAL.addAddress(address.address, address.family === 'IPv6' ? 'ipv6' : 'ipv4')
    }
    ownAdded = true
  }
  return LOCAL
}

/** The IPv4 address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address, whose traffic goes to it. */
function embeddedIPv4(address: string): string | undefined {
  const words = expandedIPv6(address)
  if (!words) return undefined
  const quad = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every(word => word === 0)) return quad(words[6], words[7])
  if (words[0] === 0x2002) return quad(words[1], words[2])
  return undefined
}

/** An IPv6 address as its eight 16-bit words (a dotted IPv4 tail included), or undefined. */
function expandedIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase()
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number)
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail, more] = text.split('::')
  if (more !== undefined) return undefined
  const parse = (part: string | undefined) => (part ? part.split(':').map(word => parseInt(word, 16)) : [])
  const front = parse(head)
  const back = parse(tail)
  const words = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
  return words.length === 8 && words.every(word => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined
}

function isLocal(address: LookupAddress): boolean {
  if (localRanges().check(address.address, address.family === 6 ? 'ipv6' : 'ipv4')) return true
  const inside = address.family === 6 ? embeddedIPv4(address.address) : undefined
  return inside !== undefined && localRanges().check(inside, 'ipv4')
}

/** Why a connection was not made: the name resolves only to local addresses its rule may not reach. */
const LOCAL_ONLY = 'EHMMLOCAL'

/** How long the addresses found for a name are given again, and for how many names at most. */
const NAME_KEPT_MS = 2_000
const NAMES_KEPT = 256

/** Name resolution that gives every address found. */
type LookupAll = (hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, all: LookupAddress[]) => void) => void

/**
 * Name resolution that gives a name asked for again within NAME_KEPT_MS the addresses found the last time, as a
 * resolver's cache would: a burst of connections to one host (a package manager's downloads, an agent's requests)
 * costs one lookup through libuv's thread pool, not one each. Failures are not kept. What it gives is judged at
 * each use all the same (guardedLookup).
 */
function keptLookup(lookup: LookupFunction): LookupAll {
  const kept = new Map<string, {until: number; found: LookupAddress[]}>()
  return (hostname, options, callback) => {
    const key = `${hostname} ${options.family ?? 0} ${options.hints ?? 0}`
    const hit = kept.get(key)
    if (hit && hit.until > performance.now()) return process.nextTick(callback, null, [...hit.found])
    lookup(hostname, {...options, all: true}, (error, found) => {
      if (error) return callback(error, [])
      kept.delete(key)
      kept.set(key, {until: performance.now() + NAME_KEPT_MS, found: found as LookupAddress[]})
      if (kept.size > NAMES_KEPT) kept.delete(kept.keys().next().value!)
      callback(null, [...(found as LookupAddress[])])
    })
  }
}

/** Name resolution for one connection: with `local` false, local addresses are left out (none left: LOCAL_ONLY). */
function guardedLookup(lookup: LookupAll, local: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (error, all) => {
      const usable = local ? all : all.filter(address => !isLocal(address))
      if (error || usable.length === 0) {
        const why = error ?? Object.assign(new Error(`${hostname} resolves to local addresses only`), {code: LOCAL_ONLY})
        return callback(why as NodeJS.ErrnoException, '', 0)
      }
      if (options.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, usable)
      else callback(null, usable[0].address, usable[0].family)
    })
  }
}

/** Headers that describe one hop, not the request: never passed on (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

export interface ProxyTarget {
  host: string
  port: number
}

export interface Proxy {
  /** The TCP port, when listening on one (macOS); undefined on a unix socket. */
  port: number | undefined
  /** The refused hosts, in the order first refused, and how many there were. */
  refused(): {named: string[]; count: number}
  /** Stops listening and ends every connection. */
  close(): Promise<void>
}

/**
 * Where the proxy listens: an abstract unix socket (`\0name`, Linux; and its CONNECT socket beside it, for the
 * helper's bridge) or 127.0.0.1 on a free port.
 */
export type Listen = {socket: string} | {loopback: true}

/**
 * The CONNECT socket's name is the proxy's socket's with this after it (the helper's bridge, net.c, knows it too).
 * The bridge sends there, alone, the head of a CONNECT that opens a connection, and relays the tunnel itself,
 * straight to the host: its bytes then pass through one process instead of two (the bridge and this one). The
 * answer's first line is for the bridge: `hmm-tunnel LENGTH KEEP HOST PORT ADDRESS...` (how many ms the bridge may give
 * the same head this verdict again without asking, as long as the addresses found for a name are given again here;
 * the host's canonical name, for its debug lines; the addresses checked, to dial in turn; then LENGTH bytes the
 * client gets should none take the connection), or `hmm-answer LENGTH` (then LENGTH bytes
 * the client gets). The bridge acts on it once it is whole, not at its close, which can come a wake-up later.
 */
export const CONNECT_SOCKET = '.connect'

/** What a client gets that sent what is not a request. */
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'

export interface ProxyOptions {
  /** Name resolution (default: the system's, as dns.lookup). */
  lookup?: LookupFunction
  /** How long connecting to a host may take (default CONNECT_TIMEOUT_MS). */
  connectTimeout?: number
}

/** Starts the proxy; resolves once it listens. */
export async function startProxy(rules: HostRule[], where: Listen, options: ProxyOptions = {}): Promise<Proxy> {
  const lookup = keptLookup(options.lookup ?? (dnsLookup as unknown as LookupFunction))
  const connectTimeout = options.connectTimeout ?? CONNECT_TIMEOUT_MS
  const open = new Set<Duplex>()
  const refusedHosts = new Set<string>()
  let refusedCount = 0
  const track = (socket: Duplex) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
  }
  const refuse = (host: string) => {
    if (!refusedHosts.has(host)) {
      refusedCount++
      if (refusedHosts.size < MAX_NAMED) refusedHosts.add(host)
    }
  }
  /** Whether the target may be reached, and if so how it is looked up. */
  const judge = (target: ProxyTarget | undefined): 'bad' | 'refused' | LookupFunction => {
    if (!target) return 'bad'
    const how = reach(rules, target.host, target.port)
    if (how) return guardedLookup(lookup, how === 'exact')
    refuse(target.host)
    return 'refused'
  }
  /** An upstream that could not be had: refused when its name led only to local addresses. */
  const failed = (target: ProxyTarget, error: NodeJS.ErrnoException): Answer => {
    debug(`proxy: ${target.host}:${target.port}: ${error.message}`)
    if (error.code !== LOCAL_ONLY) return 502
    refuse(target.host)
    return 'local'
  }

  /** An HTTP server that takes what clients may send and hold open; what it cannot parse is answered `bad`. */
  const bounded = (bad: string) => {
    const server = createServer({maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 0})
    server.maxConnections = MAX_CONNECTIONS
    server.on('connection', (socket: Socket) => {
      // A client that resets or vanishes ends its own connection, nothing more.
      socket.on('error', () => {})
      track(socket)
    })
    server.on('clientError', (error, socket) => {
      debug(`proxy: ${error.message}`)
      if (socket.writable) socket.end(bad)
      socket.destroy()
    })
    return server
  }
  const server = bounded(BAD_REQUEST)

  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => {})
    const target = authority(req.url ?? '')
    const verdict = judge(target)
    if (typeof verdict !== 'function' || !target) return endRaw(client, verdict === 'bad' ? 400 : 403, target)
    const upstream = connect({host: target.host, port: target.port, lookup: verdict, noDelay: true})
    track(upstream)
    upstream.setTimeout(connectTimeout, () => upstream.destroy(new Error('timed out')))
    let established = false
    upstream.once('connect', () => {
      established = true
      upstream.setTimeout(0)
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    // Before the tunnel, the client is told why there is none; after, it ends with its upstream.
    upstream.on('error', error => {
      if (!established) endRaw(client, failed(target, error), target)
    })
    upstream.on('close', () => {
      if (established) client.destroy()
    })
    client.on('close', () => upstream.destroy())
  })

  /**
   * The request, sent on to its target (already judged) with `headers`; connecting timed, the socket
   * tracked. Undefined when Node's client will not send what its parser let through (a header's bytes, the path).
   */
  const sendOn = (req: IncomingMessage, target: ProxyTarget & {path: string}, lookup: LookupFunction, headers: string[]) => {
    let upstream: ClientRequest
    try {
      upstream = httpRequest({host: target.host, port: target.port, lookup, method: req.method, path: target.path, headers, setHost: false, agent: false})
    } catch (error) {
      debug(`proxy: ${(error as Error).message}`)
      return undefined
    }
    // Only connecting is timed: a server may take its time to answer.
    upstream.on('socket', socket => {
      track(socket)
      socket.setTimeout(connectTimeout, () => upstream.destroy(new Error('timed out')))
      socket.once('connect', () => socket.setTimeout(0))
    })
    return upstream
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.on('error', () => {})
    res.on('error', () => {})
    const target = requestTarget(req)
    const verdict = judge(target)
    if (typeof verdict !== 'function' || !target) return endResponse(res, verdict === 'bad' ? 400 : 403, target)
    const upstream = sendOn(req, target, verdict, passedOn(req.rawHeaders, target))
    if (!upstream) return endResponse(res, 400, target)
    upstream.on('response', response => {
      response.on('error', () => res.destroy())
      try {
        res.writeHead(response.statusCode ?? 502, response.statusMessage, withoutHopByHop(response.rawHeaders))
      } catch (error) {
        debug(`proxy: ${target.host}:${target.port}: ${(error as Error).message}`)
        upstream.destroy()
        return endResponse(res, 502, target)
      }
      response.pipe(res)
    })
    upstream.on('error', error => {
      if (!res.headersSent) endResponse(res, failed(target, error), target)
      else res.destroy()
    })
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })

  // A plain-HTTP upgrade (WebSocket over ws://), judged as any plain request: sent on with this
  // hop's Upgrade, and once the host switches protocols (101), bytes both ways, as a CONNECT tunnel.
  server.on('upgrade', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => {})
    const target = requestTarget(req)
    const verdict = judge(target)
    if (typeof verdict !== 'function' || !target) return endRaw(client, verdict === 'bad' ? 400 : 403, target)
    // Its bytes after the headers are sent on once the host has switched: a body before that would never arrive.
    if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) !== 0) return endRaw(client, 'upgrade-body', target)
    const upstream = sendOn(req, target, verdict, [...passedOn(req.rawHeaders, target), 'Connection', 'Upgrade', 'Upgrade', req.headers.upgrade ?? ''])
    if (!upstream) return endRaw(client, 400, target)
    let answered = false
    upstream.on('upgrade', (response: IncomingMessage, socket: Socket, upstreamHead: Buffer) => {
      answered = true
      track(socket)
      socket.on('error', () => client.destroy())
      client.write(`${statusLine(response)}${headerLines(response.rawHeaders)}\r\n`)
      if (upstreamHead.length > 0) client.write(upstreamHead)
      if (head.length > 0) socket.write(head)
      socket.pipe(client)
      client.pipe(socket)
      socket.on('close', () => client.destroy())
      client.on('close', () => socket.destroy())
    })
    // Not switched: the host's answer goes back as it came, and the connection ends with it.
    upstream.on('response', response => {
      answered = true
      response.on('error', () => client.destroy())
      client.write(`${statusLine(response)}${headerLines(withoutHopByHop(response.rawHeaders))}Connection: close\r\n\r\n`)
      response.pipe(client)
    })
    upstream.on('error', error => {
      if (!answered) endRaw(client, failed(target, error), target)
      else client.destroy()
    })
    client.on('close', () => upstream.destroy())
    upstream.end()
  })

  /**
   * The CONNECT socket's server (see CONNECT_SOCKET): a CONNECT is judged, counted and resolved as above, and the
   * bridge dials. It sends the head alone: what follows, the bridge keeps for the host.
   */
  const bridgeServer = () => {
    const asked = bounded(toBridge('answer', BAD_REQUEST))
    asked.on('connect', (req: IncomingMessage, bridge: Duplex) => {
      // Closed as soon as it is written: the bridge reads no further, and waits for no end.
      const tell = (verdict: string) => {
        if (bridge.writable) bridge.write(verdict, () => bridge.destroy())
      }
      const target = authority(req.url ?? '')
      const verdict = judge(target)
      if (typeof verdict !== 'function' || !target) return tell(toBridge('answer', rawAnswer(verdict === 'bad' ? 400 : 403, target)))
      verdict(target.host, {all: true}, (error, found) => {
        if (error) return tell(toBridge('answer', rawAnswer(failed(target, error), target)))
        const addresses = familiesInTurn(found as LookupAddress[]).map(address => address.address)
        tell(toBridge('tunnel', rawAnswer(502, target), `${NAME_KEPT_MS} ${target.host} ${target.port} ${addresses.join(' ')}`))
      })
    })
    return asked
  }

  const servers = 'socket' in where ? [server, bridgeServer()] : [server]
  for (const [index, each] of servers.entries()) {
    await new Promise<void>((resolve, reject) => {
      each.once('error', reject)
      if ('socket' in where) each.listen(`\0${where.socket}${index === 0 ? '' : CONNECT_SOCKET}`, resolve)
      else each.listen(0, '127.0.0.1', resolve)
    })
    each.on('error', error => debug(`proxy: ${error.message}`))
  }
  const address = server.address()
  return {
    port: typeof address === 'object' && address ? (address as AddressInfo).port : undefined,
    refused: () => ({named: [...refusedHosts], count: refusedCount}),
    close: async () => {
      const closed = servers.map(each => new Promise(resolve => each.close(resolve)))
      for (const socket of open) socket.destroy()
      await Promise.all(closed)
    },
  }
}

/** CONNECT's `host:port` (the port is required), canonical. */
export function authority(text: string): ProxyTarget | undefined {
  const split = splitHostPort(text)
  const host = split && canonicalHost(split.host)
  return host && split.port ? {host, port: split.port} : undefined
}

/** A plain-HTTP request's target: its absolute `http:` URL, or else its Host header. */
export function requestTarget(req: IncomingMessage): (ProxyTarget & {path: string}) | undefined {
  const url = req.url ?? ''
  if (url.startsWith('/')) {
    const host = req.headers.host
    const split = host === undefined ? undefined : splitHostPort(host)
    const canonical = split && canonicalHost(split.host)
    return canonical ? {host: canonical, port: split.port ?? 80, path: url} : undefined
  }
  if (!/^http:\/\//i.test(url)) return undefined
  // The authority ends at the path or the query (a fragment is never sent).
  const rest = url.slice('http://'.length)
  const end = rest.search(/[/?]/)
  const split = splitHostPort(end < 0 ? rest : rest.slice(0, end))
  const canonical = split && canonicalHost(split.host)
  if (!canonical) return undefined
  const path = end < 0 ? '/' : rest[end] === '?' ? `/${rest.slice(end)}` : rest.slice(end)
  return {host: canonical, port: split.port ?? 80, path}
}

/** The request's headers for the host it goes to: Host is the target, nothing of this hop's. */
function passedOn(raw: string[], target: ProxyTarget): string[] {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host
  return ['Host', target.port === 80 ? host : `${host}:${target.port}`, ...withoutHopByHop(raw).filter((_, index, all) => !isHost(all, index))]
}

function isHost(raw: string[], index: number): boolean {
  const name = index % 2 === 0 ? raw[index] : raw[index - 1]
  return name.toLowerCase() === 'host'
}

/** Raw headers ([name, value, ...]) without the hop-by-hop ones, and those Connection names. */
function withoutHopByHop(raw: string[]): string[] {
  const named = new Set(HOP_BY_HOP)
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index].toLowerCase() === 'connection') for (const name of raw[index + 1].split(',')) named.add(name.trim().toLowerCase())
  }
  const kept: string[] = []
  for (let index = 0; index < raw.length; index += 2) if (!named.has(raw[index].toLowerCase())) kept.push(raw[index], raw[index + 1])
  return kept
}

/** An answer's status line as it came. */
function statusLine(response: IncomingMessage): string {
  return `HTTP/1.1 ${response.statusCode ?? 502} ${response.statusMessage ?? ''}\r\n`
}

/** Raw headers ([name, value, ...]) as lines; Node's parser let no line break through in them. */
function headerLines(raw: string[]): string {
  let lines = ''
  for (let index = 0; index < raw.length; index += 2) lines += `${raw[index]}: ${raw[index + 1]}\r\n`
  return lines
}

/** What the proxy answers when it passes nothing on: an HTTP status, or 'local' (a 403 for a name that led only to local addresses). */
type Answer = 400 | 403 | 'local' | 'upgrade-body' | 502

const REASONS: Record<number, string> = {400: 'Bad Request', 403: 'Forbidden', 502: 'Bad Gateway'}

/** What the client is told, in a line it can show its user. */
function why(answer: Answer, target: ProxyTarget | undefined): string {
  const where = target ? `${target.host}:${target.port}` : ''
  switch (answer) {
    case 403:
      return `hmm: ${where} is not in this command's --net list\n`
    case 'local':
      return `hmm: ${where} resolves to this machine's or a private address, which a *.domain rule does not reach (name the host exactly)\n`
    case 502:
      return `hmm: ${where} could not be reached\n`
    case 'upgrade-body':
      return 'hmm: the proxy passes on upgrades of plain HTTP without a body (as WebSocket sends them)\n'
    default:
      return 'hmm: the proxy takes CONNECT host:port, or http:// requests\n'
  }
}

/** The HTTP status an answer is given with. */
function statusOf(answer: Answer): 400 | 403 | 502 {
  if (answer === 'local') return 403
  return answer === 'upgrade-body' ? 400 : answer
}

/**
 * The addresses in the order to dial them: the families in turn, from the first one's (RFC 8305 4, as Node's
 * autoSelectFamily does), so a family that does not answer costs one attempt's wait, not one per address.
 */
function familiesInTurn(found: LookupAddress[]): LookupAddress[] {
  const first = found.filter(address => address.family === found[0]?.family)
  const other = found.filter(address => address.family !== found[0]?.family)
  return first.flatMap((address, index) => (index < other.length ? [address, other[index]] : [address])).concat(other.slice(first.length))
}

/** A verdict for the bridge (see CONNECT_SOCKET): its line, then the answer for the client. */
function toBridge(kind: 'answer' | 'tunnel', answer: string, where?: string): string {
  return `hmm-${kind} ${Buffer.byteLength(answer)}${where ? ` ${where}` : ''}\n${answer}`
}

/** The answer as the bytes of an HTTP response, for a client whose connection has left Node's HTTP server. */
function rawAnswer(answer: Answer, target: ProxyTarget | undefined): string {
  const body = why(answer, target)
  const status = statusOf(answer)
  return `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

function endRaw(socket: Duplex, answer: Answer, target: ProxyTarget | undefined): void {
  if (socket.writable) socket.end(rawAnswer(answer, target))
  ;(socket as Socket).destroySoon?.()
}

function endResponse(res: ServerResponse, answer: Answer, target: ProxyTarget | undefined): void {
  const body = why(answer, target)
  res.writeHead(statusOf(answer), {'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), Connection: 'close'})
  res.end(body)
}
