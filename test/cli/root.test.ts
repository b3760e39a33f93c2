// Run as root (SPEC "Sandbox" › Reading, issue 24): the command reads no
// file that only root may read, outside its tree and grants, while it
// writes its tree, -w places, caches and /tmp as before, and what it
// writes is root's on disk, for hmm diff and apply to take back.
import {chmodSync, mkdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const root = process.getuid?.() === 0

const skipped = !root ? 'needs root' : undefined

describe.skipIf(skipped !== undefined)(`run as root${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  it("cannot read a 0600 file of root's outside, and still writes its tree, a -w place, a cache and /tmp, as root's on disk", async () => {
    world = new World('root-files')
    await world.gitRepo()
    // Only the file's own mode keeps it: every directory on the way is open.
    chmodSync(world.root, 0o755)
    const secret = world.write(join(world.root, 'etc', 'mysql', 'debian.cnf'), 'password = hunter2\n')
    chmodSync(secret, 0o600)
    const granted = join(world.root, 'granted')
    mkdirSync(granted)
    const script = [
      `cat '${secret}' 2>/dev/null || echo unreadable`,
      'echo work > new.txt && echo more >> README.md && echo tree',
      `echo g > '${granted}/g' && echo granted`,
      'mkdir -p ~/.cache/tool && echo c > ~/.cache/tool/c && cat ~/.cache/tool/c',
      'echo t > /tmp/t && cat /tmp/t',
    ].join('; ')
    const result = await world.hmm(['run', '-n', 'r', '-w', granted, 'sh', '-c', script])
    expect(result.stdout, result.stderr).toBe('unreadable\ntree\ngranted\nc\nt\n')
    const tree = (await world.hmm(['path', 'r'])).stdout.trim()
    for (const made of [join(tree, 'new.txt'), join(granted, 'g')]) expect(statSync(made).uid, made).toBe(0)
    const diff = await world.hmm(['diff', '--stat', 'r'])
    expect(diff.stdout).toMatch(/new\.txt/)
    const applied = await world.hmm(['apply', 'r'])
    expect(applied.exitCode, applied.stderr).toBe(0)
    expect(readFileSync(join(world.origin, 'new.txt'), 'utf8')).toBe('work\n')
    expect(statSync(join(world.origin, 'new.txt')).uid).toBe(0)
  })

  it('falls back, saying so in hmm sandbox and when it runs, where a -w place lies beneath a directory only root may search: the command still writes it', async () => {
    world = new World('root-fallback')
    await world.gitRepo()
    const closed = join(world.root, 'closed')
    mkdirSync(closed, {mode: 0o700})
    const place = join(closed, 'place')
    mkdirSync(place)
    const sandbox = await world.hmm(['sandbox', '-w', place])
    expect(sandbox.stdout).toContain(
      `  ids: run as root, the command is root over every file it may read (no idmapped mount here: ${place}: a directory on the way only root may search)\n`,
    )
    const result = await world.hmm(['run', '--rm', '-w', place, 'sh', '-c', `echo x > '${place}/f' && echo wrote`])
    expect(result.stdout, result.stderr).toBe('wrote\n')
    expect(readFileSync(join(place, 'f'), 'utf8')).toBe('x\n')
    // Said when it happens, once: the reader of the command's end says nothing.
    const warning = `hmm: warning: run as root, the command can read every file root may (${place}: a directory on the way only root may search); hmm sandbox shows it`
    expect(result.stderr.split('\n').filter(line => line.includes('warning'))).toEqual([warning])
  })

  it('binds a port below 1024 in a network of its own (--net none), as before', async () => {
    world = new World('root-low-port')
    const bind = `import socket; s = socket.socket(); s.bind(("127.0.0.1", 80)); print("bound")`
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'python3', '-c', bind])
    expect(result.stdout, result.stderr).toBe('bound\n')
  })
})
