// `hmm-helper exec --isolate --net none|proxy` (SPEC "Network"): the
// command gets a network namespace of its own with only its loopback up.
// Every way out is tried for real against servers this test runs on the
// host's loopback (TCP, UDP), an external address, DNS; with `proxy` the
// only way out is the loopback port the helper bridges to hmm's proxy (here
// a stand-in on an abstract unix socket). In both modes seccomp leaves only
// unix, IPv4 and IPv6 sockets, none raw.
import {spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {createSocket} from 'node:dgram'
import {mkdirSync} from 'node:fs'
import {createServer, type AddressInfo, type Server} from 'node:net'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {execArgs, repo, run, world} from './support.js'
import {hostServer} from '../host-server.js'

const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']

const servers: Array<{close(): unknown}> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

function workspace(name: string): {ws: string; lock: string} {
  const w = world(name)
  const ws = join(w, 'ws')
  mkdirSync(ws)
  return {ws, lock: join(ws, 'lock')}
}

/** Perl: try to make a socket of each family/type, print what happened. */
const SOCKETS = `
use Socket;
for (["unix", AF_UNIX, SOCK_STREAM], ["inet", AF_INET, SOCK_STREAM], ["inet6", AF_INET6, SOCK_DGRAM],
     ["netlink", 16, SOCK_RAW], ["packet", 17, SOCK_RAW], ["raw", AF_INET, SOCK_RAW]) {
  my ($name, $family, $type) = @$_;
  print socket(my $s, $family, $type, 0) ? "$name ok\\n" : "$name refused\\n";
}`

describe('hmm-helper exec --net none', () => {
  it("leaves only its own loopback: the host's loopback servers, TCP and UDP, and external addresses are out of reach", async () => {
    const {ws, lock} = workspace('net-none')
    const tcp = await hostServer(servers)
    let datagrams = 0
    const udp = createSocket('udp4', () => datagrams++)
    servers.push(udp)
    await new Promise<void>(resolve => udp.bind(0, '127.0.0.1', resolve))
    const udpPort = udp.address().port
    const script = [
      `curl -sS -m 10 http://127.0.0.1:${tcp.port}/ 2>/dev/null && echo tcp-reached`,
      `printf x > /dev/udp/127.0.0.1/${udpPort} 2>/dev/null`,
      'curl -sS -m 10 http://1.1.1.1/ 2>/dev/null && echo external-reached',
      "sed -n 's/^ *\\([a-z0-9]*\\):.*/\\1/p' /proc/net/dev",
    ].join('; ')
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, '--net', 'none'], ['bash', '-c', script]))
    expect(r.report).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('lo\n')
    expect(tcp.connections()).toBe(0)
    expect(datagrams).toBe(0)
  })

  it('has its loopback up, so servers of its own work', async () => {
    const {ws, lock} = workspace('net-loopback')
    const script = `const s = require('net').createServer(c => c.end('own\\n')).listen(0, '127.0.0.1', () =>
      require('net').connect(s.address().port, '127.0.0.1').on('data', d => { process.stdout.write(d); s.close() }))`
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, '--net', 'none'], [process.execPath, '-e', script]))
    expect(r).toMatchObject({code: 0, stdout: 'own\n', report: ''})
  })

  it('fails name lookups', async () => {
    const {ws, lock} = workspace('net-dns')
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, '--net', 'none'], ['sh', '-c', 'getent hosts example.com || echo no-answer']))
    expect(r).toMatchObject({code: 0, stdout: 'no-answer\n', report: ''})
  })

  it('makes no socket but unix, IPv4 and IPv6 ones, and none raw (seccomp); without --net all of them are left to the kernel', async () => {
    const {ws, lock} = workspace('net-families')
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, '--net', 'none'], ['perl', '-e', SOCKETS]))
    expect(r).toMatchObject({code: 0, report: ''})
    expect(r.stdout).toBe('unix ok\ninet ok\ninet6 ok\nnetlink refused\npacket refused\nraw refused\n')
    // The control: the same try without --net makes a netlink socket, so the refusal above is the filter's.
    const open = await run(execArgs(lock, [...policy(ws), '--isolate', ws], ['perl', '-e', SOCKETS]))
    expect(open.stdout).toContain('netlink ok\n')
  })

  it('needs the namespaces', async () => {
    const {ws, lock} = workspace('net-no-isolate')
    const r = await run(execArgs(lock, [...policy(ws), '--net', 'none'], ['true']))
    expect(r.code).toBe(125)
    expect(r.report).toMatch(/^setup --net needs --isolate/)
  })
})

describe('hmm-helper exec --net proxy', () => {
  /** A stand-in for hmm's proxy on an abstract unix socket: echoes what it is sent, prefixed. */
  async function standIn(): Promise<{name: string; server: Server}> {
    const name = `hmm-test-${randomBytes(6).toString('hex')}`
    const server = createServer(socket => {
      socket.write('proxy:')
      socket.pipe(socket)
    })
    servers.push(server)
    await new Promise<void>(resolve => server.listen(`\0${name}`, resolve))
    return {name, server}
  }

  it('bridges its loopback port to the proxy and to nothing else', async () => {
    const {ws, lock} = workspace('net-proxy')
    const {name} = await standIn()
    const tcp = await hostServer(servers)
    const port = 39000 + Math.floor(Math.random() * 1000)
    const script = [
      `'${process.execPath}' -e "const c = require('net').connect(${port}, '127.0.0.1', () => c.end('hello')); c.pipe(process.stdout)"; echo`,
      `curl -sS -m 10 http://127.0.0.1:${tcp.port}/ 2>/dev/null && echo tcp-reached`,
      "sed -n 's/^ *\\([a-z0-9]*\\):.*/\\1/p' /proc/net/dev",
    ].join('; ')
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], ['bash', '-c', script]))
    expect(r).toMatchObject({code: 0, stdout: 'proxy:hello\nlo\n', report: ''})
    expect(tcp.connections()).toBe(0)
  })

  it("keeps the bridge out of the command's sight: its /proc lists the init and the command's own processes, so no /proc/PID/net shows the host's network (the attacker's fifth review, F3)", async () => {
    const {ws, lock} = workspace('net-proxy-proc')
    const {name} = await standIn()
    const port = 39000 + Math.floor(Math.random() * 1000)
    // sh expands the glob and tests itself: no other process of the command's is there to be listed.
    const script = `for p in /proc/[0-9]*; do [ $p = /proc/1 ] || [ $p = /proc/$$ ] || echo "seen: $p $(tr '\\0' ' ' < $p/cmdline)"; done; echo done`
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], ['sh', '-c', script]))
    expect(r).toMatchObject({code: 0, stdout: 'done\n', report: ''})
  })

  it('carries many connections at once, each its own bytes, a megabyte each way', async () => {
    const {ws, lock} = workspace('net-proxy-many')
    const {name} = await standIn()
    const port = 39000 + Math.floor(Math.random() * 1000)
    // 40 connections at once, each sends 1 MiB of its own byte and checks the echo (after "proxy:") is all of it.
    const client = `const net = require('net'); let ok = 0
for (let i = 0; i < 40; i++) {
  const body = Buffer.alloc(1 << 20, 65 + (i % 26)); let got = []
  const c = net.connect(${port}, '127.0.0.1', () => c.end(body))
  c.on('data', d => got.push(d)).on('end', () => Buffer.concat(got).equals(Buffer.concat([Buffer.from('proxy:'), body])) && ok++)
}
process.on('exit', () => console.log(ok))`
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', client]))
    expect(r.report).toBe('')
    expect(r.stdout).toBe('40\n')
  })

  it("sets up every time, however late the bridge starts: it holds nothing of the command's /dev, which is made read-only", async () => {
    const {ws, lock} = workspace('net-proxy-late')
    const {name} = await standIn()
    const port = 39000 + Math.floor(Math.random() * 1000)
    // The shim holds the bridge's first open of /dev/null until the init is making the command's /dev.
    const shim = join(dirname(ws), 'late-null.so')
    const built = spawnSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-std=gnu11', '-shared', '-fPIC', '-o', shim, 'test/helper/late-null.c', '-ldl'], {
      cwd: repo,
      encoding: 'utf8',
    })
    expect(built.stderr).toBe('')
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const env = {...process.env, LD_PRELOAD: shim}
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], ['true']), {env})
    expect(r).toMatchObject({code: 0, report: ''})
  })

  /**
   * A stand-in for the proxy's CONNECT socket (CONNECT_SOCKET in proxy.ts) beside the stand-in at `name`: keeps the
   * heads it is sent, answers each with the verdict `verdict(head)` gives.
   */
  async function askedAt(name: string, verdict: (head: string) => string): Promise<string[]> {
    const heads: string[] = []
    const server = createServer(socket => {
      let head = ''
      socket.on('data', chunk => {
        head += chunk
        if (!head.endsWith('\r\n\r\n')) return
        heads.push(head)
        socket.end(verdict(head))
      })
    })
    servers.push(server)
    await new Promise<void>(resolve => server.listen(`\0${name}.connect`, resolve))
    return heads
  }

  const verdictOf = (kind: 'answer' | 'tunnel', answer: string, where?: string) =>
    `hmm-${kind} ${Buffer.byteLength(answer)}${where ? ` ${where}` : ''}\n${answer}`

  /** A host on the loopback that answers, once the client has ended, `host:` and all the client sent. */
  async function echoHost(): Promise<number> {
    const server = createServer(socket => {
      let got = ''
      socket.on('data', chunk => (got += chunk)).on('end', () => socket.end(`host:${got}`))
    })
    servers.push(server)
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return (server.address() as AddressInfo).port
  }

  /** Node inside: for each target, CONNECT (with `early` right after the head), `late` once answered, then all it got. */
  const connectClient = (port: number, targets: string[]) => `const net = require('net')
const one = target => new Promise(resolve => {
  const c = net.connect(${port}, '127.0.0.1', () => c.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\nearly'))
  let got = '', answered = false
  c.on('data', d => { got += d; if (!answered && got.includes('\\r\\n\\r\\n')) { answered = true; c.end('late') } })
  c.on('close', () => resolve(got)).on('error', () => {})
})
;(async () => { for (const target of ${JSON.stringify(targets)}) console.log(JSON.stringify(await one(target))) })()`

  it("tunnels a CONNECT that opens a connection itself, to the address the proxy's CONNECT socket names: the proxy gets the head alone, the host every byte after it", async () => {
    const {ws, lock} = workspace('net-proxy-tunnel')
    const {name} = await standIn()
    const host = await echoHost()
    const heads = await askedAt(name, () => verdictOf('tunnel', 'HTTP/1.1 502 Bad Gateway\r\n\r\n', `0 a.example ${host} 127.0.0.1`))
    const port = 39000 + Math.floor(Math.random() * 1000)
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', connectClient(port, ['a.example:443'])]))
    expect(r.report).toBe('')
    expect(r.stdout).toBe(`${JSON.stringify('HTTP/1.1 200 Connection Established\r\n\r\nhost:earlylate')}\n`)
    expect(heads).toEqual(['CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n'])
  })

  /** A port nothing listens on: the server that had it is closed. */
  async function closedPort(): Promise<number> {
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise(resolve => closed.close(resolve))
    return port
  }

  it('gives a head sent again byte for byte the tunnel verdict the proxy gave it, for as long as the proxy said; refusals are asked each time', async () => {
    const {ws, lock} = workspace('net-proxy-kept')
    const {name} = await standIn()
    const host = await echoHost()
    const heads = await askedAt(name, head =>
      head.includes('refused.example')
        ? verdictOf('answer', 'HTTP/1.1 403 Forbidden\r\n\r\nrefused\n')
        : verdictOf('tunnel', 'HTTP/1.1 502 Bad Gateway\r\n\r\n', `${head.includes('brief') ? 0 : 600000} x ${host} 127.0.0.1`),
    )
    const port = 39000 + Math.floor(Math.random() * 1000)
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const targets = [
      'a.example:443',
      'a.example:443',
      'b.example:443',
      'a.example:443',
      'brief.example:443',
      'brief.example:443',
      'refused.example:443',
      'refused.example:443',
    ]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', connectClient(port, targets)]))
    expect(r.report).toBe('')
    const tunnelled = JSON.stringify('HTTP/1.1 200 Connection Established\r\n\r\nhost:earlylate')
    const refused = JSON.stringify('HTTP/1.1 403 Forbidden\r\n\r\nrefused\n')
    expect(r.stdout).toBe(`${[...Array<string>(6).fill(tunnelled), refused, refused].join('\n')}\n`)
    const asked = (target: string) => `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`
    expect(heads).toEqual(['a.example:443', 'b.example:443', 'brief.example:443', 'brief.example:443', 'refused.example:443', 'refused.example:443'].map(asked))
  })

  it("gives the command the proxy's answer when it refuses, or when none of the addresses it names takes the connection", async () => {
    const {ws, lock} = workspace('net-proxy-answer')
    const {name} = await standIn()
    const down = await closedPort()
    await askedAt(name, head =>
      head.includes('refused.example')
        ? verdictOf('answer', 'HTTP/1.1 403 Forbidden\r\n\r\nrefused\n')
        : verdictOf('tunnel', 'HTTP/1.1 502 Bad Gateway\r\n\r\nunreachable\n', `0 down.example ${down} 127.0.0.1 ::1`),
    )
    const port = 39000 + Math.floor(Math.random() * 1000)
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const client = connectClient(port, ['refused.example:443', 'down.example:443'])
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', client]))
    expect(r.report).toBe('')
    expect(r.stdout).toBe(`${JSON.stringify('HTTP/1.1 403 Forbidden\r\n\r\nrefused\n')}\n${JSON.stringify('HTTP/1.1 502 Bad Gateway\r\n\r\nunreachable\n')}\n`)
    expect(r.stderr).toBe('')
  })

  it("says on stderr, with --proxy-debug, why each address of a host was not connected (as hmm's proxy does under HMM_DEBUG)", async () => {
    const {ws, lock} = workspace('net-proxy-debug')
    const {name} = await standIn()
    const down = await closedPort()
    await askedAt(name, () => verdictOf('tunnel', 'HTTP/1.1 502 Bad Gateway\r\n\r\n', `0 down.example ${down} 127.0.0.1`))
    const port = 39000 + Math.floor(Math.random() * 1000)
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name, '--proxy-debug']
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', connectClient(port, ['down.example:443'])]))
    expect(r.report).toBe('')
    expect(r.stdout).toBe(`${JSON.stringify('HTTP/1.1 502 Bad Gateway\r\n\r\n')}\n`)
    expect(r.stderr).toBe(`hmm: debug: proxy: down.example:${down}: connect 127.0.0.1:${down}: Connection refused\n`)
  })

  /**
   * An address that takes no connection on `port` and refuses none (as a host behind a broken route): 127.0.0.2 with
   * a listener whose queue of one is filled and never accepted, so the kernel drops every further SYN.
   */
  async function unanswered(port: number): Promise<string> {
    const script = `use Socket; use IO::Handle;
my $at = pack_sockaddr_in(${port}, inet_aton("127.0.0.2"));
my ($l, $c);
socket($l, PF_INET, SOCK_STREAM, 0) && bind($l, $at) && listen($l, 0) or die "listen: $!";
socket($c, PF_INET, SOCK_STREAM, 0) && connect($c, $at) or die "fill: $!";
STDOUT->autoflush(1); print "ready\\n"; sleep 600;`
    const child = spawn('perl', ['-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    servers.push({close: () => child.kill()})
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve())
      child.once('exit', code => reject(new Error(`the unanswered address did not start (${code})`)))
    })
    return '127.0.0.2'
  }

  it('goes on to the next address the proxy names while one does not answer (Happy Eyeballs), within the one deadline', async () => {
    const {ws, lock} = workspace('net-proxy-eyeballs')
    const {name} = await standIn()
    const host = await echoHost()
    const silent = await unanswered(host)
    await askedAt(name, () => verdictOf('tunnel', 'HTTP/1.1 502 Bad Gateway\r\n\r\n', `0 two.example ${host} ${silent} 127.0.0.1`))
    const port = 39000 + Math.floor(Math.random() * 1000)
    const net = ['--net', 'proxy', '--proxy-port', String(port), '--proxy-socket', name]
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, ...net], [process.execPath, '-e', connectClient(port, ['two.example:443'])]))
    expect(r.report).toBe('')
    expect(r.stdout).toBe(`${JSON.stringify('HTTP/1.1 200 Connection Established\r\n\r\nhost:earlylate')}\n`)
  })

  it('refuses a proxy without its port and socket', async () => {
    const {ws, lock} = workspace('net-proxy-usage')
    const r = await run(execArgs(lock, [...policy(ws), '--isolate', ws, '--net', 'proxy'], ['true']))
    expect(r.code).toBe(125)
    expect(r.report).toMatch(/^setup --net proxy needs --proxy-port and --proxy-socket/)
  })
})
