// hmm's proxy (src/net/) against a hostile client: its host rules in
// canonical form only, and the proxy itself, run for real on the loopback
// and spoken to with raw sockets: what it lets through, what it refuses,
// and that no garbage, oversized header or half-sent request ends it.
import {randomBytes} from 'node:crypto'
import {createServer as createHttpServer, type IncomingMessage} from 'node:http'
import type {LookupAddress} from 'node:dns'
import {networkInterfaces} from 'node:os'
import {connect, createServer, type AddressInfo, type LookupFunction, type Socket} from 'node:net'
import type {Duplex} from 'node:stream'
import {afterEach, describe, expect, it} from 'vitest'
import {allows, canonicalHost, parseRule, parseRules} from '../../src/net/hosts.js'
import {CONNECT_SOCKET, startProxy, type Proxy} from '../../src/net/proxy.js'
import {refusedLine} from '../../src/app/network.js'

describe('host rules', () => {
  it('judges hosts in canonical form only: case, a trailing dot and every spelling of an IPv4 address are one host', () => {
    expect(canonicalHost('Example.COM.')).toBe('example.com')
    for (const spelling of ['127.1', '0x7f.1', '2130706433', '0177.0.0.1']) expect(canonicalHost(spelling)).toBe('127.0.0.1')
    expect(canonicalHost('[::1]')).toBe('::1')
    for (const bad of ['', 'a b', 'x@y', 'exa%6dple.com', 'a..b', '1.2.3.999', 'foo.123', '[::1', '::1', 'a/b', 'a\\b', 'a\u0000b', 'ex\u00e4mple.com'])
      expect(canonicalHost(bad), bad).toBeUndefined()
  })

  it('matches exactly, or subdomains by *.suffix, on ports 80 and 443 unless a port is named; IP addresses only when listed', () => {
    const rules = parseRules(['example.com', '*.example.org', 'api.example.net:8443', '10.0.0.7', '[::1]:9000'])
    expect(allows(rules, 'example.com', 443)).toBe(true)
    expect(allows(rules, 'example.com', 80)).toBe(true)
    expect(allows(rules, 'example.com', 22)).toBe(false)
    expect(allows(rules, 'www.example.com', 443)).toBe(false)
    expect(allows(rules, 'a.b.example.org', 443)).toBe(true)
    expect(allows(rules, 'example.org', 443)).toBe(false)
    expect(allows(rules, 'evilexample.org', 443)).toBe(false)
    expect(allows(rules, 'api.example.net', 8443)).toBe(true)
    expect(allows(rules, 'api.example.net', 443)).toBe(false)
    expect(allows(rules, '10.0.0.7', 80)).toBe(true)
    expect(allows(rules, '10.0.0.8', 80)).toBe(false)
    expect(allows(rules, '::1', 9000)).toBe(true)
    // A wildcard never matches an address, whatever its digits.
    expect(allows(parseRules(['*.com']), '127.0.0.1', 80)).toBe(false)
  })

  it('refuses a rule it cannot read, in one line', () => {
    // A label never starts with '-': '--' took --net's value in `hmm run --net -- make`.
    for (const bad of ['*', '*.', 'a.com:0', 'a.com:65536', 'a.com:', 'http://a.com', '*.10.0.0.7', 'x@y.com', '--', '--rm', 'a.-b.com'])
      expect(() => parseRule(bad), bad).toThrow(/^net: not a host name, \*\.domain or IP address \(with an optional :PORT\): /)
  })

  it('says the refused hosts as SPEC does, naming twenty at most', () => {
    expect(refusedLine({named: [], count: 0})).toBeUndefined()
    expect(refusedLine({named: ['evil.example'], count: 1})).toBe('refused connections to 1 host: evil.example')
    expect(refusedLine({named: ['evil.example', '10.0.0.7'], count: 2})).toBe('refused connections to 2 hosts: evil.example, 10.0.0.7')
    const many = Array.from({length: 25}, (_, index) => `h${index}.example`)
    expect(refusedLine({named: many, count: 30})).toBe(`refused connections to 30 hosts: ${many.slice(0, 20).join(', ')}, and 10 more`)
  })
})

describe('the proxy', () => {
  let proxy: Proxy | undefined
  const closers: Array<() => unknown> = []
  afterEach(async () => {
    await proxy?.close()
    proxy = undefined
    for (const close of closers.splice(0)) close()
  })

  /** An upstream on the loopback: an echo server for CONNECT and plain HTTP both is overkill; HTTP answering its Host. */
  async function upstream(): Promise<number> {
    const server = createHttpServer((req, res) => res.end(`up ${req.method} ${req.headers.host} ${req.url}`))
    closers.push(() => server.close())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return (server.address() as AddressInfo).port
  }

  /** Sends raw bytes to the proxy and collects all it answers until it closes (or `until` is seen). */
  function raw(bytes: string | Buffer, until?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket: Socket = connect(proxy!.port!, '127.0.0.1', () => socket.write(bytes))
      let got = ''
      socket.on('data', chunk => {
        got += chunk.toString('latin1')
        if (until && got.includes(until)) {
          socket.destroy()
          resolve(got)
        }
      })
      socket.on('close', () => resolve(got))
      socket.on('error', reject)
    })
  }

  /** A WebSocket-like server on the loopback: answers an upgrade with 101 (or 403 on /deny), then echoes what it gets; what it was asked for in `seen`. */
  async function upgrading(): Promise<{port: number; seen: string[]}> {
    const seen: string[] = []
    const server = createHttpServer((_req, res) => res.end('not upgraded'))
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      seen.push(`${req.headers.host} ${req.url} ${req.headers.upgrade} ${req.headers['sec-websocket-key']}`)
      if (req.url === '/deny') return socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 7\r\nConnection: close\r\n\r\ndenied\n')
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: accepted\r\n\r\n')
      if (head.length > 0) socket.write(`echo:${head}`)
      socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk}`))
    })
    closers.push(() => server.close())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return {port: (server.address() as AddressInfo).port, seen}
  }

  const upgrade = (target: string, path = '/chat') =>
    `GET http://${target}${path} HTTP/1.1\r\nHost: evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: a2V5\r\n\r\n`

  const alive = async (port: number) =>
    expect(await raw(`GET http://127.0.0.1:${port}/ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toContain(`up GET 127.0.0.1:${port} /ok`)

  it('passes CONNECT to an allowed host and port, byte for byte, and refuses other spellings and ports', async () => {
    const port = await upstream()
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    const tunnel = await raw(`CONNECT 0x7f.1:${port} HTTP/1.1\r\nHost: x\r\n\r\nGET /t HTTP/1.1\r\nHost: tunnelled\r\nConnection: close\r\n\r\n`, 'up GET')
    expect(tunnel).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\n/)
    expect(tunnel).toContain('up GET tunnelled /t')
    expect(await raw(`CONNECT localhost:${port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(await raw(`CONNECT 127.0.0.1:${port + 1} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(proxy.refused()).toEqual({named: ['localhost', '127.0.0.1'], count: 2})
  })

  it('takes an absolute URL whose path is only a query', async () => {
    const port = await upstream()
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    expect(await raw(`GET http://127.0.0.1:${port}?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toContain(`up GET 127.0.0.1:${port} /?q=1`)
  })

  it('answers 400 to what is not a request it takes, and keeps serving', async () => {
    const port = await upstream()
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    const bad = [
      Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10]),
      'CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n',
      `CONNECT user@127.0.0.1:${port} HTTP/1.1\r\n\r\n`,
      `GET https://127.0.0.1:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET http://u:p@127.0.0.1:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`,
      'GET / HTTP/1.1\r\n\r\n',
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n`,
    ]
    for (const bytes of bad) expect(await raw(bytes), JSON.stringify(String(bytes))).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    await alive(port)
    expect(proxy.refused().count).toBe(0)
  })

  it('refuses headers past its bound, and clients that never finish theirs do not stop it', async () => {
    const port = await upstream()
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    const huge = await raw(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`)
    expect(huge).toMatch(/^HTTP\/1\.1 4(00|31) /)
    const stalled = Array.from({length: 20}, () =>
      connect(proxy!.port!, '127.0.0.1', function (this: Socket) {
        this.write('GET http://127.0.0.1/ HTTP/1.1\r\nHost')
      }),
    )
    for (const socket of stalled) socket.on('error', () => {})
    closers.push(() => stalled.forEach(socket => socket.destroy()))
    await alive(port)
  })

  it("never takes a *.suffix rule to the machine's own, link-local or private addresses, whatever the name's DNS says; an exact name it does", async () => {
    const port = await upstream()
    // DNS the command's author controls: every name under attacker.example says 127.0.0.1 (or the cloud's metadata address).
    const lookup: LookupFunction = (hostname, options, callback) => {
      const address = hostname.startsWith('metadata.') ? '169.254.169.254' : '127.0.0.1'
      if (options.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, [{address, family: 4}])
      else callback(null, address, 4)
    }
    proxy = await startProxy(parseRules([`*.attacker.example:${port}`, `exact.attacker.example:${port}`, '*.attacker.example']), {loopback: true}, {lookup})
    expect(await raw(`CONNECT sub.attacker.example:${port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(await raw(`GET http://sub.attacker.example:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(await raw('GET http://metadata.attacker.example/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(await raw(upgrade(`up.attacker.example:${port}`))).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n[^]*resolves to this machine's/)
    expect(proxy.refused().named).toEqual(['sub.attacker.example', 'metadata.attacker.example', 'up.attacker.example'])
    // Named exactly, the user meant it.
    expect(await raw(`GET http://exact.attacker.example:${port}/e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toContain(
      `up GET exact.attacker.example:${port} /e`,
    )
  })

  it("counts as local the IPv4 forms hidden in IPv6 (NAT64, 6to4, IPv4-compatible), reserved ranges and the machine's own addresses", async () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .find(address => address && !address.internal)
    const answers: Record<string, [string, number]> = {
      nat64: ['64:ff9b::7f00:1', 6],
      sixtofour: ['2002:7f00:1::1', 6],
      compat: ['::7f00:1', 6],
      sitelocal: ['fec0::1', 6],
      multicast6: ['ff02::1', 6],
      bench: ['198.18.0.1', 4],
      multicast: ['224.0.0.1', 4],
      reserved: ['240.0.0.1', 4],
      ...(own ? {own: [own.address, own.family === 'IPv6' ? 6 : 4] as [string, number]} : {}),
    }
    const lookup: LookupFunction = (hostname, options, callback) => {
      const [address, family] = answers[hostname.split('.')[0]] ?? ['64:ff9b::5db8:d822', 6]
      if (options.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, [{address, family}])
      else callback(null, address, family)
    }
    proxy = await startProxy(parseRules(['*.attacker.example']), {loopback: true}, {lookup, connectTimeout: 200})
    for (const name of Object.keys(answers)) expect(await raw(`CONNECT ${name}.attacker.example:443 HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    // A NAT64 form of a public address is what DNS64 gives on IPv6-only networks: tried, not refused.
    expect(await raw('CONNECT public.attacker.example:443 HTTP/1.1\r\n\r\n')).not.toMatch(/403/)
  })

  it('relays a plain-HTTP upgrade (ws://) to an allowed host: its 101, then bytes both ways; a refusal as it came; other hosts refused', async () => {
    const up = await upgrading()
    proxy = await startProxy(parseRules([`127.0.0.1:${up.port}`]), {loopback: true})
    // What the client sends after the request (before any answer) goes along; then a real exchange on the open connection.
    const exchanged = await new Promise<string>((resolve, reject) => {
      const socket: Socket = connect(proxy!.port!, '127.0.0.1', () => socket.write(`${upgrade(`127.0.0.1:${up.port}`)}early`))
      let got = ''
      socket.on('data', chunk => {
        got += chunk.toString('latin1')
        if (got.includes('echo:early') && !got.includes('echo:ping')) socket.write('ping')
        if (got.includes('echo:ping')) {
          socket.destroy()
          resolve(got)
        }
      })
      socket.on('close', () => resolve(got))
      socket.on('error', reject)
    })
    expect(exchanged).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/)
    expect(exchanged).toMatch(/\r\nUpgrade: websocket\r\n[^]*\r\n\r\necho:earlyecho:ping$/)
    expect(exchanged).toContain('\r\nSec-WebSocket-Accept: accepted\r\n')
    // Sent to the host its URL names, with that Host; the protocol's own headers passed on.
    expect(up.seen).toEqual([`127.0.0.1:${up.port} /chat websocket a2V5`])
    expect(await raw(upgrade(`127.0.0.1:${up.port}`, '/deny'))).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n[^]*\r\n\r\ndenied\n$/)
    expect(await raw(upgrade(`localhost:${up.port}`))).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n[^]*not in this command's --net list/)
    expect(await raw(upgrade(`127.0.0.1:${up.port + 1}`))).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(proxy.refused()).toEqual({named: ['localhost', '127.0.0.1'], count: 2})
    // A body before the switch would wait for the host's answer, which waits for the body: refused.
    const withBody = upgrade(`127.0.0.1:${up.port}`).replace('\r\n\r\n', '\r\nContent-Length: 4\r\n\r\nbody')
    expect(await raw(withBody)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[^]*upgrades of plain HTTP without a body/)
    expect(up.seen).toHaveLength(2)
  })

  it('tells the client when an allowed host cannot be reached (502), for CONNECT and plain HTTP', async () => {
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise(resolve => closed.close(resolve))
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    expect(await raw(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/)
    expect(await raw(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/)
    expect(proxy.refused().count).toBe(0)
  })

  it('looks a name up once for connections made together, and again after a failure', async () => {
    const port = await upstream()
    const asked: string[] = []
    const lookup: LookupFunction = (hostname, _options, callback) => {
      asked.push(hostname)
      if (hostname === 'flaky.example' && asked.filter(name => name === hostname).length === 1)
        return callback(Object.assign(new Error('not found'), {code: 'ENOTFOUND'}), '', 0)
      ;(callback as unknown as (error: null, all: LookupAddress[]) => void)(null, [{address: '127.0.0.1', family: 4}])
    }
    proxy = await startProxy(parseRules([`a.example:${port}`, `flaky.example:${port}`]), {loopback: true}, {lookup})
    const get = (host: string) => raw(`GET http://${host}:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    expect(await get('a.example')).toContain(`up GET a.example:${port} /`)
    expect(await get('a.example')).toContain(`up GET a.example:${port} /`)
    expect(await get('flaky.example')).toMatch(/^HTTP\/1\.1 502 /)
    expect(await get('flaky.example')).toContain(`up GET flaky.example:${port} /`)
    expect(asked).toEqual(['a.example', 'flaky.example', 'flaky.example'])
  })

  it('times only the connecting: a server may take longer than that to answer', async () => {
    const slow = createHttpServer((_req, res) => setTimeout(() => res.end('late'), 600))
    closers.push(() => slow.close())
    await new Promise<void>(resolve => slow.listen(0, '127.0.0.1', resolve))
    const port = (slow.address() as AddressInfo).port
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true}, {connectTimeout: 200})
    expect(await raw(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*late$/)
  })

  it("answers the helper's bridge on its CONNECT socket as it would answer the client: where to tunnel, or what to say", async () => {
    const name = `hmm-test-${randomBytes(6).toString('hex')}`
    const lookup: LookupFunction = (hostname, options, callback) => {
      const all = hostname === 'two.example' ? ['2001:db8::1', '2001:db8::2', '192.0.2.1', '192.0.2.2'] : ['127.0.0.1']
      ;(callback as unknown as (error: null, all: LookupAddress[]) => void)(
        null,
        all.map(address => ({address, family: address.includes(':') ? 6 : 4})),
      )
    }
    proxy = await startProxy(parseRules(['two.example', 'local.example:8443', '*.attacker.example']), {socket: name}, {lookup})
    /** What the CONNECT socket answers to a head, as the bridge sends it. */
    const ask = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(`\0${name}${CONNECT_SOCKET}`, () => socket.write(head))
        let got = ''
        socket
          .on('data', chunk => (got += chunk))
          .on('close', () => resolve(got))
          .on('error', reject)
      })
    // How long the bridge may give the same head this verdict (as long as a name's addresses are kept here), the
    // host, and every address checked, to be dialled in turn, the families alternating (RFC 8305: a family that
    // does not answer costs one attempt's wait, not one per address); then what the client gets should none connect.
    const unreachable =
      'HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 42\r\nConnection: close\r\n\r\nhmm: two.example:443 could not be reached\n'
    expect(await ask('CONNECT TWO.example.:443 HTTP/1.1\r\nHost: x\r\n\r\n')).toBe(
      `hmm-tunnel ${unreachable.length} 2000 two.example 443 2001:db8::1 192.0.2.1 2001:db8::2 192.0.2.2\n${unreachable}`,
    )
    // An exact name may lead to the machine itself; a *.suffix may not; other hosts and ports are refused.
    expect(await ask('CONNECT local.example:8443 HTTP/1.1\r\n\r\n')).toMatch(/^hmm-tunnel \d+ 2000 local\.example 8443 127\.0\.0\.1\nHTTP\/1\.1 502 /)
    expect(await ask('CONNECT sub.attacker.example:443 HTTP/1.1\r\n\r\n')).toMatch(
      /^hmm-answer \d+\nHTTP\/1\.1 403 Forbidden\r\n[^]*resolves to this machine's/,
    )
    expect(await ask('CONNECT evil.example:443 HTTP/1.1\r\n\r\n')).toMatch(/^hmm-answer \d+\nHTTP\/1\.1 403 Forbidden\r\n[^]*not in this command's --net list/)
    expect(await ask('CONNECT local.example:443 HTTP/1.1\r\n\r\n')).toMatch(/^hmm-answer \d+\nHTTP\/1\.1 403 /)
    expect(await ask('CONNECT x@evil.example:443 HTTP/1.1\r\n\r\n')).toMatch(/^hmm-answer \d+\nHTTP\/1\.1 400 /)
    const bad = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'
    expect(await ask('CONNECT \x00garbage\r\n\r\n')).toBe(`hmm-answer ${bad.length}\n${bad}`)
    expect(proxy.refused()).toEqual({named: ['sub.attacker.example', 'evil.example', 'local.example'], count: 3})
  })

  it('ends every connection when it is closed', async () => {
    const echo = createServer(socket => socket.pipe(socket))
    closers.push(() => echo.close())
    await new Promise<void>(resolve => echo.listen(0, '127.0.0.1', resolve))
    const port = (echo.address() as AddressInfo).port
    proxy = await startProxy(parseRules([`127.0.0.1:${port}`]), {loopback: true})
    const socket = connect(proxy.port!, '127.0.0.1', () => socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`))
    await new Promise(resolve => socket.once('data', resolve))
    const closed = new Promise(resolve => socket.once('close', resolve))
    await proxy.close()
    proxy = undefined
    await closed
  })
})
