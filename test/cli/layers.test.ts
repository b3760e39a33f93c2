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
//
// The other causes are simulated by what hmm reads: a /proc of the test's
// own (a tmpfs in a mount namespace) holds only the sysctl that says why
// (Ubuntu's AppArmor restriction, Debian's switch), and without its
// /proc/self the helper's namespace cannot be set up, as under AppArmor's
// restriction, where mapping the user's ids fails.
import {execa, execaSync} from 'execa'
import {chmodSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {asOnMacOS, BIN, HELPER, World} from '../world.js'

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

/** A /proc holding only the sysctl `name` set to `value`: the helper cannot map its ids into a namespace of its own there. */
const sysctlOnly = (name: string, value: string) => {
  const file = `/proc/sys/${name.replaceAll('.', '/')}`
  return `mount -t tmpfs none /proc && mkdir -p ${file.slice(0, file.lastIndexOf('/'))} && echo ${value} > ${file} && exec "$@"`
}
const canFakeProc = execaSync('unshare', ['-Urm', 'sh', '-c', sysctlOnly('kernel.x', '1'), 'sh', 'true'], {reject: false}).exitCode === 0

/** hmm where the kernel refuses user namespaces (by default: user.max_user_namespaces is 0). */
async function hmmWithoutUserns(args: string[], setUp = LIMIT_ZERO, env = world.env) {
  const result = await execa('unshare', [setUp === LIMIT_ZERO ? '-Ur' : '-Urm', 'sh', '-c', setUp, 'sh', process.execPath, BIN, ...args], {
    cwd: world.origin,
    env,
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
      'hmm: the sandbox needs unprivileged user namespaces, which this system refuses (user.max_user_namespaces is 0); ' +
        'allow them: sudo sysctl -w user.max_user_namespaces=10000; ' +
        'or to run under Landlock alone, set isolation = "landlock-only" in ~/.config/hmm/config.toml\n',
    )
    expect(result.exitCode).toBe(1)
    expect((await world.hmm(['ls'])).stdout).toBe('')
    const data = world.dataDir
    expect(existsSync(data) ? readdirSync(data).filter(name => /^[0-9a-z]{6}$/.test(name)) : []).toEqual([])
  })

  it('hmm run runs nothing outside before it refuses: not even git in the origin', async () => {
    const bin = join(world.root, 'logging-bin')
    const log = join(world.root, 'git-ran')
    world.write(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec /usr/bin/git "$@"\n`)
    chmodSync(join(bin, 'git'), 0o755)
    const result = await hmmWithoutUserns(['run', 'true'], LIMIT_ZERO, {...world.env, PATH: `${bin}:${world.env.PATH}`})
    expect(result.stderr).toMatch(/^hmm: the sandbox needs unprivileged user namespaces/)
    expect(result.exitCode).toBe(1)
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('')
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
    expect(refused.stdout).toContain(
      '  namespaces: refused by this system (user.max_user_namespaces is 0): hmm run refuses; allow them: sudo sysctl -w user.max_user_namespaces=10000; or set isolation',
    )
    optOut()
    const off = await hmmWithoutUserns(['sandbox'])
    expect(off.stdout).toContain('  namespaces: off (isolation = "landlock-only")')
    expect(off.stdout).toContain('every process of the machine and its command line (/proc/PID/cmdline: a password typed as an argument) is in sight')
  })
})

describe.skipIf(!canFakeProc)('where unprivileged user namespaces are refused for another cause, hmm run says it and its fix in one line', () => {
  const helper = realpathSync(HELPER)
  const optOutClause = '; or to run under Landlock alone, set isolation = "landlock-only" in ~/.config/hmm/config.toml\n'
  it.each([
    [
      "Ubuntu's AppArmor restriction: a profile for the helper, or the sysctl",
      sysctlOnly('kernel.apparmor_restrict_unprivileged_userns', '1'),
      "which this system refuses (AppArmor's kernel.apparmor_restrict_unprivileged_userns is 1); " +
        "allow them to hmm's helper with an AppArmor profile: " +
        `printf '%s\\n' 'abi <abi/4.0>,' 'include <tunables/global>' 'profile hmm-helper "${helper}" flags=(unconfined) {' '  userns,' '}' ` +
        '| sudo tee /etc/apparmor.d/hmm-helper >/dev/null && sudo apparmor_parser -r /etc/apparmor.d/hmm-helper ' +
        '(or to every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)',
    ],
    [
      "Debian's switch",
      sysctlOnly('kernel.unprivileged_userns_clone', '0'),
      'which this system refuses (kernel.unprivileged_userns_clone is 0); allow them: sudo sysctl -w kernel.unprivileged_userns_clone=1',
    ],
    [
      'no sysctl that says why (a container)',
      sysctlOnly('kernel.x', '1'),
      'which this system refuses (/proc/self/setgroups: No such file or directory; in a container, its seccomp profile may refuse them); allow unshare(CLONE_NEWUSER) to this user',
    ],
  ])('%s', async (_, setUp, said) => {
    const result = await hmmWithoutUserns(['run', 'true'], setUp)
    expect(result.stderr).toBe(`hmm: the sandbox needs unprivileged user namespaces, ${said}${optOutClause}`)
    expect(result.exitCode).toBe(1)
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
    expect(result.stdout).toContain(`may not write (inside the writable paths):\n  ${asOnMacOS(world.home)}/.cargo/bin\n`)
    expect(result.stdout).toContain('  not on macOS: namespaces (no PID namespace')
    expect(result.stdout).toContain('  hmm run refuses on macOS until you opt out: set isolation = "landlock-only" in ~/.config/hmm/config.toml\n')
  })
})
