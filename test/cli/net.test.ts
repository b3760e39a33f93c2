// The command's network (SPEC "Network"): `--net none` on hmm run and hmm
// exec and `net = "none"` in the config file leave the command nothing but
// its own loopback. Tried for real with curl and node against servers this
// test runs on the host's loopback, and an external address.
import {createServer, type AddressInfo, type Server} from 'node:net'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
const servers: Server[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  world?.dispose()
})

/** An HTTP server on the host's loopback that counts who came. */
async function hostServer(): Promise<{port: number; connections: () => number}> {
  let count = 0
  const server = createServer(socket => {
    count++
    socket.end('HTTP/1.0 200 OK\r\n\r\nreached\n')
  })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as AddressInfo).port, connections: () => count}
}

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')

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
    const host = await hostServer()
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
    const host = await hostServer()
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

  it('is what net = "none" in the config file gives, and what hmm sandbox shows', async () => {
    world = new World('net-none-config')
    const host = await hostServer()
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
    expect(shown.stdout).toContain('  namespaces: user, mount, PID, IPC and network\n')
    expect(shown.stdout).toContain(' --net none -- COMMAND...\n')
    const open = await world.hmm(['sandbox'])
    expect(open.stdout).toContain("network: the user's; --net confines it\n")
    expect(open.stdout).not.toMatch(/--net (none|proxy) /)
  })

  it('needs the namespaces: refused, before anything is made, where the user opted out of them', async () => {
    world = new World('net-none-optout')
    world.write(configFile(), 'isolation = "landlock-only"\n')
    const result = await world.hmm(['run', '--net', 'none', 'true'])
    expect(result.stderr).toBe('hmm: --net needs the namespaces, and isolation = "landlock-only" is set in ~/.config/hmm/config.toml\n')
    expect(result.exitCode).toBe(1)
    expect((await world.hmm(['ls'])).stdout).toBe('')
  })

  it('takes none or hosts, nothing empty', async () => {
    world = new World('net-bad')
    const result = await world.hmm(['run', '--net', 'a.example,', 'true'])
    expect(result.stderr).toBe('hmm: --net takes none or HOST[,HOST...]: a.example,\n')
    expect(result.exitCode).toBe(1)
  })
})
