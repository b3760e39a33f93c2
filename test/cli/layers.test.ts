// No silent downgrade: where a layer of the sandbox cannot be had, hmm run
// refuses with one line that says which and how to enable it or opt out,
// and makes nothing; opted out, it runs under Landlock alone; hmm sandbox
// shows the layers in force.
//
// The refusal is the kernel's own: hmm runs inside a user namespace whose
// user.max_user_namespaces is 0, so the helper's unshare(CLONE_NEWUSER)
// fails with ENOSPC, as on systems that set the limit to 0 (and as in a
// container that refuses nested user namespaces). Inside it hmm is uid 0 of
// that namespace: the user itself, mapped.
import {execa, execaSync} from 'execa'
import {existsSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {BIN, HELPER, World} from '../world.js'

const LIMIT_ZERO = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'
const canUnshare = execaSync('unshare', ['-Ur', 'sh', '-c', LIMIT_ZERO, 'sh', 'true'], {reject: false}).exitCode === 0
const abi = Number(execaSync(HELPER, ['abi']).stdout)

let world: World
beforeAll(() => {
  world = new World('layers')
  world.file('README', 'hi\n')
})
afterEach(context => {
  rmSync(join(world.home, '.config', 'hmm'), {recursive: true, force: true})
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => world.dispose())

/** hmm where the kernel refuses user namespaces. */
async function hmmWithoutUserns(args: string[]) {
  const result = await execa('unshare', ['-Ur', 'sh', '-c', LIMIT_ZERO, 'sh', process.execPath, BIN, ...args], {
    cwd: world.origin,
    env: world.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
  })
  return {exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr)}
}

const optOut = () => world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')

describe.skipIf(!canUnshare)('where unprivileged user namespaces cannot be had', () => {
  it('hmm run refuses in one line, saying how to enable them or opt out, and makes no workspace', async () => {
    const result = await hmmWithoutUserns(['run', 'sh', '-c', 'echo ran > ran.txt'])
    expect(result.stderr).toBe(
      'hmm: the sandbox needs unprivileged user namespaces, which this system refuses (unshare: No space left on device); ' +
        'raise user.max_user_namespaces (sysctl -w user.max_user_namespaces=10000), ' +
        'or to run under Landlock alone, set isolation = "landlock-only" in ~/.config/hmm/config.toml\n',
    )
    expect(result.exitCode).toBe(1)
    expect((await world.hmm(['ls'])).stdout).toBe('')
    const data = world.dataDir
    expect(existsSync(data) ? readdirSync(data).filter(name => /^[0-9a-z]{6}$/.test(name)) : []).toEqual([])
  })

  it('hmm run runs under Landlock and seccomp alone once the user opted out', async () => {
    optOut()
    const result = await hmmWithoutUserns(['run', '--rm', 'sh', '-c', 'grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status'])
    expect(result.stderr).toMatch(/^hmm: workspace /)
    expect(result.stdout).toMatch(/NoNewPrivs:\s+1\nSeccomp:\s+2\n/)
    expect(result.exitCode).toBe(0)
  })

  it('hmm sandbox shows the namespaces refused, and off once opted out', async () => {
    const refused = await hmmWithoutUserns(['sandbox'])
    expect(refused.exitCode).toBe(0)
    expect(refused.stdout).toContain('  namespaces: refused by this system (unshare: No space left on device): hmm run refuses; raise user.max_user_namespaces')
    optOut()
    const off = await hmmWithoutUserns(['sandbox'])
    expect(off.stdout).toContain('  namespaces: off (isolation = "landlock-only")')
    expect(off.stdout).toContain('every process of the machine and its command line (/proc/PID/cmdline: a password typed as an argument) is in sight')
  })
})

describe('hmm sandbox', () => {
  it('shows the layers in force on this system', async () => {
    const result = await world.hmm(['sandbox'])
    expect(result.exitCode).toBe(0)
    const layers = result.stdout.slice(result.stdout.indexOf('layers:\n'))
    expect(layers).toContain('  namespaces: user, mount, PID and IPC; every mount read-only but the places it may write; a /run of its own\n')
    expect(layers).toContain(`  landlock: ABI ${abi}: files; signals and abstract unix sockets ${abi >= 6 ? 'scoped' : 'not scoped'}`)
    expect(layers).toContain(
      "  seccomp: ioctl TIOCSTI and TIOCLINUX refused; set-user-ID and set-group-ID modes refused; other processes' limits and priorities refused\n",
    )
  })

  it("shows for macOS what Seatbelt does not enforce, the caches' program parts, and that hmm run refuses there until opted out", async () => {
    const result = await world.hmm(['sandbox', '--platform', 'darwin'])
    expect(result.stdout).toContain(`may not write (inside the writable paths):\n  ${world.home}/.cargo/bin\n`)
    expect(result.stdout).toContain('  not on macOS: namespaces (no PID namespace')
    expect(result.stdout).toContain('  hmm run refuses on macOS until you opt out: set isolation = "landlock-only" in ~/.config/hmm/config.toml\n')
  })
})
