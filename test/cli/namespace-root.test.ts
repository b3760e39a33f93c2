// Run as root of a user namespace (a rootless container's root, `unshare -r`):
// uid 0 that is not the host's root cannot map the host's ids nor make
// idmapped mounts, so hmm takes a plain user's way (native-helpers/ids.c
// ids_host_root) and says the command is root over what it may read. Its
// files of owners the namespace does not map are cloned as its own.
import {execa} from 'execa'
import {chownSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, hmmCommand, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** hmm as root of a user namespace of its own that maps only the caller's ids; a bound for hangs, not a measure. */
async function hmmAsNamespaceRoot(args: string[]): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const r = await execa('unshare', ['--map-root-user', '--mount', process.execPath, BIN, ...args], {
    cwd: world.origin,
    env: world.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 60_000,
    killSignal: 'SIGKILL',
    stripFinalNewline: false,
  })
  return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
}

const WARNING = "hmm: warning: run as root, the command can read every file root may (root of a user namespace, not the host's); hmm sandbox shows it\n"

/**
 * hmm as root of a user namespace that maps every user id but one group only (as root: the maps are written from
 * outside, where they may differ); a bound for hangs, not a measure.
 */
async function hmmWithMaps(uidMap: string, gidMap: string, args: string[]): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const go = join(world.root, 'go')
  const script = `mkfifo '${go}'; unshare --user --mount sh -c 'read x < "$0"; exec "$@"' '${go}' ${hmmCommand(...args)} & pid=$!
while [ "$(readlink /proc/$pid/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do sleep 0.01; done
echo '${uidMap}' > /proc/$pid/uid_map && echo '${gidMap}' > /proc/$pid/gid_map && echo > '${go}'
wait $pid`
  const r = await execa('sh', ['-c', script], {
    cwd: world.origin,
    env: world.env,
    extendEnv: false,
    reject: false,
    timeout: 60_000,
    killSignal: 'SIGKILL',
    stripFinalNewline: false,
  })
  return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
}

describe('run as root of a user namespace', () => {
  it('runs, warns, keeps the secrets closed, and takes the work back, with a file of a group it does not map', async () => {
    world = new World('namespace-root')
    await world.gitRepo()
    const secrets = world.plantSecrets()
    // A group the namespace does not map (as root: any but 0; a plain user's own group is mapped): shown as 65534.
    if (process.getuid?.() === 0) chownSync(join(world.origin, 'notes.txt'), 0, 4321)
    const script = `cat '${Object.keys(secrets)[0]}' 2>/dev/null || echo closed; echo more >> README.md; echo ran`
    const run = await hmmAsNamespaceRoot(['run', '-n', 'c', 'sh', '-c', script])
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stdout).toBe('closed\nran\n')
    expect(run.stderr.startsWith(WARNING), run.stderr).toBe(true)
    const sandbox = await hmmAsNamespaceRoot(['sandbox'])
    expect(sandbox.stdout).toContain(
      "  ids: run as root, the command is root over every file it may read (no idmapped mount here: root of a user namespace, not the host's: its ids cannot be remapped)\n",
    )
    const diff = await hmmAsNamespaceRoot(['diff', '--stat', 'c'])
    expect(diff.stdout, diff.stderr).toMatch(/README\.md \| 1 \+/)
    const applied = await hmmAsNamespaceRoot(['apply', 'c'])
    expect(applied.exitCode, applied.stderr).toBe(0)
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nuncommitted\nmore\n')
    const removed = await hmmAsNamespaceRoot(['rm', 'c'])
    expect(removed.exitCode, removed.stderr).toBe(0)
  })

  // The attacker's review 17, F2: every user id mapped is not enough to be the host's root.
  it.skipIf(process.getuid?.() !== 0)('takes the plain way where every user id is mapped but not every group', async () => {
    world = new World('namespace-root-groups')
    await world.gitRepo()
    const run = await hmmWithMaps('0 0 4294967295', '0 0 1', ['run', '--rm', 'sh', '-c', 'echo ran'])
    expect(run.stdout, run.stderr).toBe('ran\n')
    expect(run.stderr.startsWith(WARNING), run.stderr).toBe(true)
  })
})
