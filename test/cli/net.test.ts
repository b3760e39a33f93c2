// The command's network (SPEC "Network"): `--net none` on hmm run and hmm
// exec and `net = "none"` in the config file leave the command nothing but
// its own loopback; `--net HOST,...` only HTTP and HTTPS to those hosts,
// through hmm's proxy. Tried for real with curl and node against servers
// this test runs on the host's loopback (HTTP, and HTTPS with a certificate
// made here), and an external address.
import {execa} from 'execa'
import {readFileSync} from 'node:fs'
import {createServer as createHttpServer} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import {type AddressInfo} from 'node:net'
import type {Duplex} from 'node:stream'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'
import {hostServer} from '../host-server.js'

let world: World
const servers: Array<{close(): unknown}> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  world?.dispose()
})

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')

/** hmm exec's refusal beside something running with more network than the command's `net`. */
const besideWider = (label: string, net: string) =>
  `hmm: workspace ${label} is running something with more network than this command's (${net}), which it could lend through the workspace's files and /tmp; hmm stop ws first\n`

/** Node inside: connect to the host's server, then serve and reach a server of its own on the loopback. */
function nodeScript(port: number): string {
  return `const net = require('net')
net.connect(${port}, '127.0.0.1').on('connect', () => console.log('host-reached')).on('error', () => console.log('host-refused'))
  .on('close', () => { const s = net.createServer(c => c.end('own')).listen(0, '127.0.0.1', () =>
    net.connect(s.address().port, '127.0.0.1').on('data', d => { console.log(String(d)); s.close() })) })`
}

describe('--net none', () => {
  it("leaves hmm run's command only its own loopback: curl and node cannot reach the host's loopback or an external address", async () => {
    world = new World('net-none-run')
    const host = await hostServer(servers)
    const script = `curl -sS -m 10 http://127.0.0.1:${host.port}/ >/dev/null 2>&1 || echo curl-refused
curl -sS -m 10 http://1.1.1.1/ >/dev/null 2>&1 || echo external-refused
'${process.execPath}' -e "${nodeScript(host.port).replace(/"/g, '\\"')}"`
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('curl-refused\nexternal-refused\nhost-refused\nown\n')
    expect(host.connections()).toBe(0)
  })

  it('applies to hmm exec, and only to the command it is given to', async () => {
    world = new World('net-none-exec')
    const host = await hostServer(servers)
    const made = await world.hmm(['run', '-n', 'ws', 'true'])
    expect(made.exitCode, made.stderr).toBe(0)
    const curl = `curl -sS -m 10 http://127.0.0.1:${host.port}/ 2>/dev/null || echo refused`
    const confined = await world.hmm(['exec', '--net', 'none', 'ws', 'sh', '-c', curl])
    expect(confined.stdout).toBe('refused\n')
    expect(host.connections()).toBe(0)
    const open = await world.hmm(['exec', 'ws', 'sh', '-c', curl])
    expect(open.stdout).toBe('reached\n')
    expect(host.connections()).toBe(1)
  })

  it('is refused by hmm exec while a process an earlier command left runs in the workspace (it could relay through /tmp)', async () => {
    world = new World('net-none-running')
    const host = await hostServer(servers)
    // An earlier command, with the user's network, leaves a relay on a unix socket in the workspace's /tmp.
    const script = `require('net').createServer(c => { const t = require('net').connect(${host.port}, '127.0.0.1'); c.pipe(t); t.pipe(c) }).listen('/tmp/.relay')`
    const relay = `setsid '${process.execPath}' -e "${script}" </dev/null >/dev/null 2>&1 &
while [ ! -S /tmp/.relay ]; do sleep 0.1; done`
    const made = await world.hmm(['run', '-n', 'ws', 'sh', '-c', relay])
    expect(made.exitCode, made.stderr).toBe(0)
    const through = 'curl -sS -m 10 --unix-socket /tmp/.relay http://x/ 2>/dev/null || echo refused'
    for (const net of ['none', 'example.com']) {
      const refused = await world.hmm(['exec', '--net', net, 'ws', 'sh', '-c', through])
      expect(refused.stderr).toBe(besideWider(`${workspaceLine(made.stderr).id} (ws)`, net))
      expect(refused.exitCode).toBe(1)
    }
    expect(host.connections()).toBe(0)
    expect((await world.hmm(['stop', 'ws'])).exitCode).toBe(0)
    const confined = await world.hmm(['exec', '--net', 'none', 'ws', 'sh', '-c', through])
    expect(confined.stdout).toBe('refused\n')
    expect(host.connections()).toBe(0)
  })

  it('is refused by hmm exec only beside something running with more network: none beside none, the same hosts beside them', async () => {
    world = new World('net-exec-beside')
    world.write(configFile(), 'net = "none"\n')
    const leave = (what: string) => ['sh', '-c', `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo ${what}`]
    // Left running: something without the network (the config file's).
    const made = await world.hmm(['run', '-n', 'ws', ...leave('none left')])
    expect(made.exitCode, made.stderr).toBe(0)
    const label = `${workspaceLine(made.stderr).id} (ws)`
    expect(await world.hmm(['exec', 'ws', 'echo', 'beside none'])).toMatchObject({exitCode: 0, stdout: 'beside none\n'})
    // More network beside it is not refused (the other way round is); then two hosts left running.
    const hosts = await world.hmm(['exec', '--net', 'example.com,api.example.com', 'ws', ...leave('hosts left')])
    expect(hosts).toMatchObject({exitCode: 0, stdout: 'hosts left\n'})
    expect(await world.hmm(['exec', '--net', 'api.example.com,example.com', 'ws', 'echo', 'same hosts'])).toMatchObject({
      exitCode: 0,
      stdout: 'same hosts\n',
    })
    const refused: Array<[string[], string]> = [
      [[], 'none'],
      [['--net', 'none'], 'none'],
      [['--net', 'example.com'], 'example.com'],
      [['--net', 'example.com,api.example.com,other.example'], 'example.com, api.example.com, other.example'],
    ]
    for (const [args, net] of refused) {
      expect(await world.hmm(['exec', ...args, 'ws', 'echo', 'ran'])).toMatchObject({exitCode: 1, stdout: '', stderr: besideWider(label, net)})
    }
    expect((await world.hmm(['stop', 'ws'])).exitCode).toBe(0)
    expect(await world.hmm(['exec', 'ws', 'echo', 'stopped'])).toMatchObject({exitCode: 0, stdout: 'stopped\n'})
  })

  it('is said, once, not to keep a command from passing data to another workspace running with more network', async () => {
    world = new World('net-neighbours')
    const leave = ['sh', '-c', 'setsid sleep 300 </dev/null >/dev/null 2>&1 &']
    const quiet = await world.hmm(['run', '--rm', '--net', 'none', 'true'])
    expect(quiet.stderr).not.toMatch(/more network/)
    // Left running in one workspace with none, in another with the user's network.
    const none = await world.hmm(['run', '-n', 'none', '--net', 'none', ...leave])
    expect(none.exitCode, none.stderr).toBe(0)
    expect((await world.hmm(['run', '--rm', '--net', 'none', 'true'])).stderr).not.toMatch(/more network/)
    const open = await world.hmm(['run', '-n', 'open', ...leave])
    expect(open.exitCode, open.stderr).toBe(0)
    const label = `${workspaceLine(open.stderr).id} (open)`
    const warning = `hmm: workspace ${label} runs with more network than this command's (none): --net keeps this command from connecting, not from passing data to them (MANUAL: Network)\n`
    const run = await world.hmm(['run', '--rm', '--net', 'none', 'echo', 'ran'])
    expect(run).toMatchObject({exitCode: 0, stdout: 'ran\n'})
    expect(run.stderr.split('\n').filter(line => line.includes('more network'))).toEqual([warning.trimEnd()])
    const exec = await world.hmm(['exec', '--net', 'none', 'none', 'echo', 'ran'])
    expect(exec.stderr).toContain(warning)
    // Without a limit there is nothing to say.
    expect((await world.hmm(['run', '--rm', 'true'])).stderr).not.toMatch(/more network/)
    expect((await world.hmm(['stop', 'open', 'none'])).exitCode).toBe(0)
    expect((await world.hmm(['run', '--rm', '--net', 'none', 'true'])).stderr).not.toMatch(/more network/)
  })

  it('is what net = "none" in the config file gives, and what hmm sandbox shows', async () => {
    world = new World('net-none-config')
    const host = await hostServer(servers)
    world.write(configFile(), 'net = "none"\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `curl -sS -m 10 http://127.0.0.1:${host.port}/ 2>/dev/null || echo refused`])
    expect(result.stdout).toBe('refused\n')
    expect(host.connections()).toBe(0)
    const shown = await world.hmm(['sandbox'])
    expect(shown.stdout).toContain('network: none: a network namespace of its own, only its loopback up; name lookups fail\n')
    expect(shown.stdout).toContain(' --net none -- COMMAND...\n')
  })

  it('is shown by hmm sandbox --net none', async () => {
    world = new World('net-none-sandbox')
    const shown = await world.hmm(['sandbox', '--net', 'none'])
    expect(shown.exitCode, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('  namespaces: user, mount, PID, IPC and network; every mount read-only but the places it may write; a /run of its own\n')
    expect(shown.stdout).toContain(' --net none -- COMMAND...\n')
    const open = await world.hmm(['sandbox'])
    expect(open.stdout).toContain("network: the user's; --net confines it\n")
    expect(open.stdout).not.toMatch(/--net (none|proxy) /)
  })

  it("is shown for macOS by hmm sandbox --platform darwin: localhost only, or the proxy's port only", async () => {
    world = new World('net-darwin')
    const none = await world.hmm(['sandbox', '--platform', 'darwin', '--net', 'none'])
    expect(none.exitCode, none.stderr).toBe(0)
    expect(none.stdout).toContain('network: none but localhost (Seatbelt); name lookups fail\n')
    expect(none.stdout).toContain('  (allow network-outbound (remote ip "localhost:*"))\n')
    const hosts = await world.hmm(['sandbox', '--platform', 'darwin', '--net', 'api.example.com'])
    expect(hosts.stdout).toContain('  (allow network-outbound (remote ip "localhost:PROXY_PORT"))\n')
    expect(hosts.stdout).toContain(
      "  network (Seatbelt): only hmm's proxy on localhost:PROXY_PORT (a free port, chosen when the command starts); no name lookups\n",
    )
    expect(hosts.stdout).not.toContain('mDNSResponder')
  })

  it('needs the namespaces: refused, before anything is made, where the user opted out of them', async () => {
    world = new World('net-none-optout')
    world.write(configFile(), 'isolation = "landlock-only"\n')
    const result = await world.hmm(['run', '--net', 'none', 'true'])
    expect(result.stderr).toBe('hmm: --net needs the namespaces, and isolation = "landlock-only" is set in ~/.config/hmm/config.toml\n')
    expect(result.exitCode).toBe(1)
    expect((await world.hmm(['ls'])).stdout).toBe('')
    expect((await world.hmm(['sandbox', '--net', 'none'])).stdout).toContain(
      'network: --net needs the namespaces, and isolation = "landlock-only": hmm run refuses\n',
    )
  })

  it('is refused the same way whichever way it was asked for: the config file, an agent, hmm exec', async () => {
    world = new World('net-optout-ways')
    const refusal = 'hmm: --net needs the namespaces, and isolation = "landlock-only" is set in ~/.config/hmm/config.toml\n'
    const refused = {exitCode: 1, stdout: '', stderr: refusal}
    world.write(configFile(), 'isolation = "landlock-only"\nnet = "none"\n')
    expect(await world.hmm(['run', 'true'])).toEqual(refused)
    world.write(configFile(), 'isolation = "landlock-only"\nnet = ["example.com"]\n')
    expect(await world.hmm(['run', 'true'])).toEqual(refused)
    // The network for every command, the opt-out for one agent's.
    world.write(configFile(), 'net = "none"\n[agent.sh]\nisolation = "landlock-only"\n')
    expect(await world.hmm(['run', 'sh', '-c', 'true'])).toEqual(refused)
    expect((await world.hmm(['ls'])).stdout).toBe('')
    world.write(configFile(), 'isolation = "landlock-only"\n')
    expect((await world.hmm(['run', '-n', 'x', 'true'])).exitCode).toBe(0)
    expect(await world.hmm(['exec', '--net', 'example.com', 'x', 'true'])).toEqual(refused)
  })

  it('takes none, profile or hosts, nothing empty', async () => {
    world = new World('net-bad')
    const result = await world.hmm(['run', '--net', 'a.example,', 'true'])
    expect(result.stderr).toBe('hmm: --net takes none, profile or HOST[,HOST...]: a.example,\n')
    expect(result.exitCode).toBe(1)
  })
})

/** An HTTP server on the host's loopback that answers with the Host header and path it was sent. */
async function httpServer(): Promise<{port: number; requests: () => number}> {
  let count = 0
  const server = createHttpServer((req, res) => {
    count++
    res.end(`plain ${req.headers.host} ${req.url}\n`)
  })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as AddressInfo).port, requests: () => count}
}

/** A WebSocket-like server on the host's loopback: an upgrade gets 101, then what it is sent echoed. */
async function upgradeServer(): Promise<{port: number; upgrades: () => number}> {
  let count = 0
  const server = createHttpServer((_req, res) => res.end('not upgraded\n'))
  server.on('upgrade', (_req, socket: Duplex) => {
    count++
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk}`))
  })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as AddressInfo).port, upgrades: () => count}
}

/** A Node client inside the sandbox that asks hmm's proxy (HTTP_PROXY) to upgrade http://TARGET/chat, as ws:// clients behind a proxy agent do. */
function upgradeClient(targets: string[]): string {
  return `const http = require('http'), proxy = new URL(process.env.HTTP_PROXY)
const ask = target => new Promise(done => {
  const req = http.request({host: proxy.hostname, port: proxy.port, path: 'http://' + target + '/chat',
    headers: {Host: target, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'a2V5'}})
  req.on('upgrade', (res, socket) => { console.log(res.statusCode); socket.write('ping'); socket.on('data', d => { console.log(String(d)); socket.destroy(); done() }) })
  req.on('response', res => { console.log('not upgraded', res.statusCode); res.resume(); done() })
  req.on('error', e => { console.log('error', e.message); done() })
  req.end()
})
;(async () => { for (const target of ${JSON.stringify(targets)}) await ask(target) })()`
}

/** An HTTPS server on the host's loopback with a certificate for localhost made here; its certificate's file. */
async function httpsServer(): Promise<{port: number; cert: string}> {
  const dir = join(world.root, 'tls')
  await execa('mkdir', ['-p', dir])
  await execa('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost',
  ])
  const server = createHttpsServer({key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem'))}, (_req, res) => res.end('secure\n'))
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as AddressInfo).port, cert: join(dir, 'cert.pem')}
}

/** curl through the proxy the command was given, localhost included (NO_PROXY would send it to the command's own loopback). */
const viaProxy = 'env -u NO_PROXY -u no_proxy curl -sS -m 20'

/** Abstract unix sockets of hmm's proxies for the workspace, as the kernel lists them. */
function proxySockets(id: string): string[] {
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .filter(line => line.includes(`@hmm-proxy-${id}-`))
}

describe('--net HOST,...', () => {
  it('lets HTTP and HTTPS (CONNECT) to the hosts given through, and refuses everything else with a 403, named when the command exits', async () => {
    world = new World('net-hosts')
    const plain = await httpServer()
    const tls = await httpsServer()
    const script = [
      `${viaProxy} --cacert '${tls.cert}' https://localhost:${tls.port}/`,
      `${viaProxy} http://localhost:${plain.port}/page`,
      `${viaProxy} https://evil.example/ 2>/dev/null || echo connect-refused`,
      `${viaProxy} http://10.0.0.7/`,
      // A port the rules do not name: localhost is refused there.
      `${viaProxy} http://localhost:${plain.port + 1}/`,
    ].join('; ')
    const result = await world.hmm(['run', '--rm', '--net', `localhost:${tls.port},localhost:${plain.port}`, 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      [
        'secure',
        `plain localhost:${plain.port} /page`,
        'connect-refused',
        "hmm: 10.0.0.7:80 is not in this command's --net list",
        `hmm: localhost:${plain.port + 1} is not in this command's --net list`,
        '',
      ].join('\n'),
    )
    expect(result.stderr).toContain('hmm: refused connections to 3 hosts: evil.example, 10.0.0.7, localhost\n')
  })

  it('says under HMM_DEBUG why a host given could not be connected, also for HTTPS, which the helper dials', async () => {
    world = new World('net-hosts-debug')
    // A port nothing listens on: the server that had it is closed.
    const closed = await httpServer()
    servers.pop()!.close()
    world.env.HMM_DEBUG = '1'
    const curl = `${viaProxy} https://localhost:${closed.port}/ 2>/dev/null || echo no-tunnel`
    const result = await world.hmm(['run', '--rm', '--net', `localhost:${closed.port}`, 'sh', '-c', curl])
    expect(result.stdout).toBe('no-tunnel\n')
    expect(result.stderr).toContain(`hmm: debug: proxy: localhost:${closed.port}: connect 127.0.0.1:${closed.port}: Connection refused\n`)
    // hmm sandbox shows the helper's arguments as hmm run gives them, the bridge's debugging too.
    expect((await world.hmm(['sandbox', '--net', 'localhost'])).stdout).toMatch(
      / --proxy-socket 'hmm-proxy-<id>-<random>' --net-mark \d+ --proxy-debug -- COMMAND\.\.\.\n/,
    )
  })

  it('sends a plain HTTP request to the host its URL names, with that Host header, whatever Host the client sent', async () => {
    world = new World('net-host-header')
    const plain = await httpServer()
    const result = await world.hmm([
      'run',
      '--rm',
      '--net',
      `127.0.0.1:${plain.port}`,
      'sh',
      '-c',
      `${viaProxy} -H 'Host: evil.example' http://127.0.0.1:${plain.port}/x`,
    ])
    expect(result.stdout).toBe(`plain 127.0.0.1:${plain.port} /x\n`)
    expect(result.stderr).not.toContain('refused')
  })

  it('passes a WebSocket upgrade of plain HTTP (ws://) to a host given, then bytes both ways; refuses it to others', async () => {
    world = new World('net-hosts-upgrade')
    const up = await upgradeServer()
    const client = upgradeClient([`127.0.0.1:${up.port}`, `127.0.0.1:${up.port + 1}`])
    const result = await world.hmm(['run', '--rm', '--net', `127.0.0.1:${up.port}`, process.execPath, '-e', client])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('101\necho:ping\nnot upgraded 403\n')
    expect(up.upgrades()).toBe(1)
    expect(result.stderr).toContain('hmm: refused connections to 1 host: 127.0.0.1\n')
  })

  it('leaves no other way out: direct TCP to the host, UDP and DNS fail', async () => {
    world = new World('net-hosts-direct')
    const host = await hostServer(servers)
    const script = [
      `curl -sS -m 10 --noproxy '*' http://127.0.0.1:${host.port}/ >/dev/null 2>&1 || echo direct-refused`,
      'getent hosts example.com >/dev/null || echo no-dns',
      `'${process.execPath}' -e "require('net').connect(${host.port}, '127.0.0.1').on('connect', () => console.log('reached')).on('error', () => console.log('node-refused'))"`,
    ].join('; ')
    const result = await world.hmm(['run', '--rm', '--net', `127.0.0.1:${host.port}`, 'sh', '-c', script])
    expect(result.stdout).toBe('direct-refused\nno-dns\nnode-refused\n')
    expect(host.connections()).toBe(0)
  })

  it.each([['none'], ['registry.npmjs.org']])(
    'answers a name lookup under --net %s with "no such host" at once, never a failure worth retrying; /etc/hosts still answers',
    async net => {
      world = new World('net-lookups')
      // Node's ENOTFOUND is getaddrinfo's EAI_NONAME; EAI_AGAIN is what makes npm retry for minutes. c-ares (dns.resolve) too.
      const lookup = (name: string) => `require('dns').lookup('${name}', (e, a) => console.log(e ? e.code : 'found ' + a))`
      const resolve = "require('dns').resolve4('example.com', e => console.log(e ? e.code : 'resolved'))"
      const script = [lookup('example.com'), lookup('localhost'), resolve].map(code => `'${process.execPath}' -e "${code}"`).join('; ')
      const result = await world.hmm(['run', '--rm', '--net', net, 'sh', '-c', script])
      expect(result.exitCode, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/^ENOTFOUND\nfound (127\.0\.0\.1|::1)\n(ECONNREFUSED|ENOTFOUND)\n$/)
    },
  )

  it('has npm try a fetch once under --net none, where no retry can succeed; a retry count the user set stays', async () => {
    world = new World('net-none-npm')
    const attempts = 'npm view left-pad version --loglevel=http 2>&1 | grep -c "attempt [0-9]* failed with ENOTFOUND"'
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', `${attempts}; echo "$npm_config_fetch_retries"`])
    expect(result.stdout).toBe('1\n0\n')
    const env = {...world.env, npm_config_fetch_retries: '1'}
    expect((await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', 'echo "$npm_config_fetch_retries"'], {env})).stdout).toBe('1\n')
  })

  it('is given by net = [...] in the config file, and in an agent profile; hmm sandbox shows it', async () => {
    world = new World('net-hosts-config')
    const plain = await httpServer()
    world.write(configFile(), `net = "none"\n[agent.sh]\nnet = ["127.0.0.1:${plain.port}", "*.example.com"]\n`)
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `${viaProxy} http://127.0.0.1:${plain.port}/`])
    expect(result.stdout).toBe(`plain 127.0.0.1:${plain.port} /\n`)
    const shown = await world.hmm(['sandbox', '--', 'sh'])
    expect(shown.stdout).toContain(
      `network: only HTTP and HTTPS through hmm's proxy, to 127.0.0.1:${plain.port} (port ${plain.port}), *.example.com (ports 80, 443); everything else fails, name lookups too\n`,
    )
    expect(shown.stdout).toMatch(/ --net proxy --proxy-port 3128 --proxy-socket 'hmm-proxy-<id>-<random>' --net-mark \d+ -- COMMAND\.\.\.\n/)
    // Other commands: the file's top level.
    expect((await world.hmm(['sandbox'])).stdout).toContain('network: none:')
  })

  it('ends the proxy with the command, and leaves nothing when hmm is killed', async () => {
    world = new World('net-hosts-end')
    const done = await world.hmm(['run', '--net', 'example.com', 'true'])
    expect(done.exitCode, done.stderr).toBe(0)
    expect(proxySockets(workspaceLine(done.stderr).id)).toEqual([])

    const running = world.start(['run', '-n', 'long', '--net', 'example.com', 'sh', '-c', 'echo started; sleep 600'])
    await running.line('started')
    const id = workspaceLine(running.stderr).id
    // The proxy's socket, and its CONNECT socket beside it.
    expect(proxySockets(id)).toHaveLength(2)
    // hmm alone: the command keeps hmm's output open, so only its exit is waited for.
    const exited = new Promise(resolve => running.child.once('exit', resolve))
    process.kill(running.child.pid!, 'SIGKILL')
    await exited
    expect(proxySockets(id)).toEqual([])
    // The command outlives hmm, as always; hmm stop ends it and the bridge to the proxy with it.
    expect((await world.hmm(['stop', 'long'])).exitCode).toBe(0)
    expect((await execa('pgrep', ['-f', `hmm-proxy-${id}-`], {reject: false})).stdout).toBe('')
  })

  it('with profile, takes the hosts of a built-in agent profile, only when asked', async () => {
    world = new World('net-profile')
    const shown = await world.hmm(['sandbox', '--net', 'profile', '--', 'claude'])
    expect(shown.exitCode, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(
      "network: only HTTP and HTTPS through hmm's proxy, to api.anthropic.com (ports 80, 443), statsig.anthropic.com (ports 80, 443);",
    )
    // Not asked: the user's network, as before.
    expect((await world.hmm(['sandbox', '--', 'claude'])).stdout).toContain("network: the user's; --net confines it\n")
    world.write(configFile(), '[agent.codex]\nnet = "profile"\n')
    expect((await world.hmm(['sandbox', '--', 'codex'])).stdout).toContain('to api.openai.com (ports 80, 443), chatgpt.com (ports 80, 443);')
    const none = await world.hmm(['run', '--net', 'profile', 'true'])
    expect(none.stderr).toBe(
      `hmm: net = "profile" is the host list of an agent's built-in profile (claude, codex), and this command has no agent profile: give the hosts\n`,
    )
    expect(none.exitCode).toBe(1)
  })

  it('refuses a host it cannot read, before anything is made', async () => {
    world = new World('net-hosts-bad')
    const result = await world.hmm(['run', '--net', 'a.example,x@evil.example', 'true'])
    expect(result.stderr).toBe('hmm: net: not a host name, *.domain or IP address (with an optional :PORT): x@evil.example\n')
    expect(result.exitCode).toBe(1)
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })
})
