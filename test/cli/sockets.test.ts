// Named unix sockets (SPEC "Sandbox", Other programs; attacker's review,
// finding 1): Landlock does not mediate connect() to a socket by its path,
// so hiding a directory from it does not keep a server listening there out
// of reach. Each case is a real server, made by the test where the user's
// programs put theirs, and a real client in the sandbox: a gpg-agent in
// ~/.gnupg, an ssh ControlMaster in ~/.ssh, Docker Desktop's socket, GNU
// screen's, one in /run, one in another workspace's /tmp.
import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {shellQuote, World, workspaceLine} from '../world.js'

let world: World
const servers: Server[] = []
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  for (const cleanup of cleanups.splice(0)) cleanup()
  world?.dispose()
})

/** A server on the socket `path` (its directory made), counting who connects. */
async function listen(path: string): Promise<{connections: () => number}> {
  mkdirSync(join(path, '..'), {recursive: true})
  let count = 0
  const server = createServer(connection => {
    count++
    connection.on('error', () => {}) // the probe may be gone before the answer
    connection.end('reached\n')
  })
  servers.push(server)
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve))
  return {connections: () => count}
}

/** A script that tries each socket given in turn and prints `<path> connected` or `<path> <error code>`. */
function probe(): string {
  const path = join(world.root, 'probe.cjs')
  writeFileSync(
    path,
    `const net = require('net')
const tryOne = path => new Promise(resolve => {
  const socket = net.connect(path)
  socket.on('connect', () => { console.log(path + ' connected'); socket.destroy(); resolve() })
  socket.on('error', error => { console.log(path + ' ' + error.code); resolve() })
})
;(async () => { for (const path of process.argv.slice(2)) await tryOne(path) })()
`,
  )
  return path
}

/** The paths the probe, run as `hmm run [flags] node probe PATH...`, reached. */
async function reached(paths: string[], flags: string[] = []): Promise<string[]> {
  const result = await world.hmm(['run', '--rm', ...flags, process.execPath, probe(), ...paths])
  expect(result.exitCode, result.stderr).toBe(0)
  const lines = result.stdout.trim().split('\n')
  expect(lines.length, result.stdout).toBe(paths.length)
  return lines.filter(line => line.endsWith(' connected')).map(line => line.slice(0, -' connected'.length))
}

/** A directory of the machine's /run a plain user may make (/run/lock is the world's), removed after the test. */
function runDir(): string {
  const dir = join('/run/lock', `hmm-sock-${randomBytes(4).toString('hex')}`)
  mkdirSync(dir)
  cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
  return dir
}

describe("the user's named unix sockets", () => {
  it('cannot be reached in a hidden directory or at a hidden path: gpg-agent, an ssh ControlMaster, a socket the config file hides', async () => {
    world = new World('sock-hidden')
    const gpg = join(world.home, '.gnupg', 'S.gpg-agent')
    const master = join(world.home, '.ssh', 'cm-git@github.com:22')
    const hidden = join(world.home, 'agent.sock')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), `hide = ["~/agent.sock"]\n`)
    const servers = [await listen(gpg), await listen(master), await listen(hidden)]
    expect(await reached([gpg, master, hidden])).toEqual([])
    expect(servers.map(server => server.connections())).toEqual([0, 0, 0])
  })

  it("cannot be reached where the user's session keeps them, found when the command starts: the home directory, ~/.screen, /run", async () => {
    world = new World('sock-session')
    const run = runDir()
    const sockets = [
      join(world.home, '.docker', 'desktop', 'docker.sock'),
      join(world.home, '.emacs.d', 'server', 'server'),
      join(world.home, '.screen', 'S-user', '4242.pts-0.host'),
      join(world.home, 'agent.sock'),
      join(run, 'agent.sock'),
      join(run, 'deeper', 'daemon.sock'),
    ]
    const listening = await Promise.all(sockets.map(listen))
    expect(await reached(sockets)).toEqual([])
    expect(listening.map(server => server.connections())).toEqual(sockets.map(() => 0))
  })

  it('reaches the sockets it makes itself, and those in a directory the user grants with -w', async () => {
    world = new World('sock-own')
    const granted = join(world.root, 'granted')
    const socket = join(granted, 'shared.sock')
    const server = await listen(socket)
    // Its own server in the tree and in its /tmp, then the client.
    const own = `const net = require('net'); const paths = [process.cwd() + '/own.sock', '/tmp/own.sock', ${JSON.stringify(socket)}]
const serve = path => new Promise(resolve => net.createServer(c => c.end()).listen(path, resolve))
;(async () => { await serve(paths[0]); await serve(paths[1]); for (const path of paths) await new Promise(resolve => net.connect(path).on('connect', () => { console.log('connected ' + path.split('/').pop()); resolve() }).on('error', e => { console.log(e.code); resolve() })); process.exit(0) })()
`
    writeFileSync(join(world.root, 'own.cjs'), own)
    const result = await world.hmm(['run', '--rm', '-w', granted, process.execPath, join(world.root, 'own.cjs')])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('connected own.sock\nconnected own.sock\nconnected shared.sock\n')
    expect(server.connections()).toBe(1)
  })

  it('leaves a hidden directory that holds a path granted with -w to Landlock: the grant works, the rest stays unreadable', async () => {
    world = new World('sock-hidden-grant')
    const keep = join(world.home, '.gnupg', 'keep')
    mkdirSync(keep, {recursive: true})
    world.write(join(world.home, '.gnupg', 'private.key'), 'secret\n')
    const result = await world.hmm([
      'run',
      '--rm',
      '-w',
      keep,
      'sh',
      '-c',
      `echo made > '${keep}/out' && cat '${keep}/out'; cat '${world.home}/.gnupg/private.key' 2>/dev/null; true`,
    ])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('made\n')
  })

  it('cannot reach a socket made in /run after it started (a Docker started later), deep in /run or, as root, at its top; one in a place of /run granted with -w it does', async () => {
    world = new World('sock-run-later')
    const run = runDir()
    const granted = join(run, 'granted')
    mkdirSync(granted)
    const later = [join(run, 'later.sock'), join(run, 'made-later', 'daemon.sock')]
    if (process.getuid?.() === 0) {
      const top = `/run/hmm-later-${randomBytes(4).toString('hex')}.sock`
      cleanups.push(() => rmSync(top, {force: true}))
      later.push(top)
    }
    const go = join(world.root, 'go')
    const probed = [...later, join(granted, 'db.sock')]
    const script = `echo started; while ! [ -e ${shellQuote(go)} ]; do sleep 0.05; done; ${shellQuote(process.execPath, probe(), ...probed)}`
    const started = world.start(['run', '--rm', '-w', granted, 'sh', '-c', script])
    await started.line('started')
    const listening = await Promise.all(probed.map(listen))
    writeFileSync(go, '')
    const result = await started.result()
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(['started', ...later.map(path => `${path} ENOENT`), `${join(granted, 'db.sock')} connected`].join('\n') + '\n')
    expect(listening.map(server => server.connections())).toEqual([...later.map(() => 0), 1])
  })

  it.skipIf(process.getuid?.() !== 0)("cannot reach GNU screen's servers in /run/screen, which is covered with nothing (as root)", async () => {
    world = new World('sock-screen')
    const made = !existsSync('/run/screen')
    const dir = join('/run/screen', `S-hmmtest${randomBytes(3).toString('hex')}`)
    mkdirSync(dir, {recursive: true, mode: 0o700})
    cleanups.push(() => rmSync(made ? '/run/screen' : dir, {recursive: true, force: true}))
    const socket = join(dir, '4242.pts-0.host')
    const server = await listen(socket)
    writeFileSync(join(world.root, 'ls.sh'), `ls -A /run/screen; ${shellQuote(process.execPath, probe(), socket)}\n`)
    const result = await world.hmm(['run', '--rm', 'sh', join(world.root, 'ls.sh')])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${socket} ENOENT\n`)
    expect(server.connections()).toBe(0)
  })
})

describe('other workspaces', () => {
  it('cannot be reached, nor seen, from a workspace: not one made before it, not one made while it runs; its own tree and /tmp are there', async () => {
    world = new World('sock-workspaces')
    const before = workspaceLine((await world.hmm(['run', '-n', 'before', 'true'])).stderr).id
    const earlier = join(world.dataDir, before, 'tmp', 'agent-ipc.sock')
    const earlierServer = await listen(earlier)
    // The command waits for the go-ahead in its /tmp, then looks.
    const script = [
      'while ! test -e /tmp/go; do sleep 0.05; done',
      `ls -A '${world.dataDir}'`,
      `'${process.execPath}' '${probe()}' "$(cat /tmp/go)" '${earlier}'`,
      'echo tree: $(ls)',
    ].join('\n')
    world.file('look.sh', script)
    const running = world.start(['run', '-n', 'looking', 'sh', 'look.sh'])
    let looking: string | undefined
    for (let tries = 0; tries < 600 && !looking; tries++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      looking = /^hmm: workspace ([0-9a-z]{6}) \(looking\)/m.exec(running.stderr)?.[1]
    }
    expect(looking, running.stderr).toBeDefined()
    const after = workspaceLine((await world.hmm(['run', '-n', 'after', 'true'])).stderr).id
    const later = join(world.dataDir, after, 'tmp', 'agent-ipc.sock')
    const laterServer = await listen(later)
    writeFileSync(join(world.dataDir, looking!, 'tmp', 'go'), later)
    const result = await running.result()
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${looking}\n${later} ENOENT\n${earlier} ENOENT\ntree: look.sh\n`)
    expect([earlierServer.connections(), laterServer.connections()]).toEqual([0, 0])
  })
})

describe('a composed home', () => {
  it('is searched only where it keeps the home: a socket there is covered, one elsewhere in the home is not there at all', async () => {
    world = new World('sock-composed')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), `show = ["~/shared", "~/lone.sock"]\n`)
    const kept = [join(world.home, 'shared', 'app.sock'), join(world.home, 'lone.sock')]
    const elsewhere = join(world.home, '.docker', 'desktop', 'docker.sock')
    const listening = await Promise.all([...kept, elsewhere].map(listen))
    const result = await world.hmm(['sandbox'])
    expect(result.exitCode, result.stderr).toBe(0)
    const covered = result.stdout.split('covered in its mount namespace')[1]?.split('\nnetwork:')[0] + '\n'
    for (const path of kept) expect(covered, result.stdout).toContain(`\n  ${path}\n`)
    expect(covered).not.toContain(elsewhere)
    const probed = await world.hmm(['run', '--rm', process.execPath, probe(), ...kept, elsewhere])
    expect(probed.exitCode, probed.stderr).toBe(0)
    expect(probed.stdout).toContain(`${elsewhere} ENOENT\n`)
    expect(probed.stdout).not.toContain('connected')
    expect(listening.map(server => server.connections())).toEqual([0, 0, 0])
  })
})

describe('hmm sandbox', () => {
  it("shows what the command's mount namespace covers: the session's places, the hidden paths that exist, the sockets found, the data directory", async () => {
    world = new World('sock-shown')
    // The whole home is there to search only where it is not composed.
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), `home = "visible"\n`)
    const socket = join(world.home, '.docker', 'desktop', 'docker.sock')
    await listen(socket)
    world.write(join(world.home, '.gnupg', 'pubring.kbx'), 'keys')
    const granted = join(world.root, 'granted')
    await listen(join(granted, 'shared.sock'))
    const result = await world.hmm(['sandbox', '-w', granted])
    expect(result.exitCode, result.stderr).toBe(0)
    const covered = result.stdout.split('covered in its mount namespace')[1]?.split('\nnetwork:')[0] + '\n'
    expect(covered, result.stdout).not.toBe('undefined\n')
    for (const path of ['/run/screen', join(world.home, '.screen'), join(world.home, '.gnupg'), socket]) expect(covered).toContain(`\n  ${path}\n`)
    expect(covered).toContain(`\n  ${world.dataDir} (but the workspace's own directory)\n`)
    expect(covered).not.toContain('shared.sock')
    expect(covered).not.toContain(join(world.home, '.ssh'))
  })
})
