// `hmm-helper abi` and `hmm-helper exec`: how hmm tells the command's own
// outcome from the helper's. The command's status passes through; a command
// that cannot start is reported as `exec <ERRNO> ...` (127/126, as a shell
// would); a sandbox that cannot be set up as `setup ...` with status 125.

import {spawn} from 'node:child_process'
import {chmodSync, mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {abi, collect, execArgs, helper, isLocked, run, sleep, unreachableBy, until, world} from './support.js'

// Enough to run a shell and nothing more: the outcome tests are not about
// the sandbox's walls.
const policy = (w: string) => ['--read', '/', '--write', w, '--dev', '/dev']

describe('hmm-helper abi', () => {
  it('prints the kernel Landlock ABI, 2 or later on this machine', async () => {
    const r = await run(['abi'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^\d+\n$/)
    expect(Number(r.stdout)).toBeGreaterThanOrEqual(2)
    expect(abi()).toBe(Number(r.stdout))
  })
})

describe('hmm-helper exec', () => {
  it("passes the command's exit status through and reports nothing", async () => {
    const w = world('exec-status')
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['sh', '-c', 'echo out; echo err >&2; exit 7']))
    expect(r).toMatchObject({code: 7, stdout: 'out\n', stderr: 'err\n', report: ''})
  })

  it('runs the command with its arguments untouched', async () => {
    const w = world('exec-args')
    const args = ['a b', '', '--', '-n', 'x\ny', 'ünï']
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['printf', '[%s]', ...args]))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(args.map(a => `[${a}]`).join(''))
  })

  it('runs the file --program names for the command, argv[0] as given, not the first of that name on PATH', async () => {
    const w = world('exec-program')
    const first = join(w, 'first')
    mkdirSync(first)
    writeFileSync(join(first, 'named'), '#!/bin/sh\necho wrong\n', {mode: 0o755})
    const r = await run(execArgs(join(w, 'lock'), ['--program', '/bin/sh', ...policy(w)], ['named', '-c', 'tr "\\0" " " < /proc/$$/cmdline']), {
      env: {...process.env, PATH: `${first}:/usr/bin:/bin`},
    })
    expect(r).toMatchObject({code: 0, stdout: 'named -c tr "\\0" " " < /proc/$$/cmdline ', report: ''})
    const missing = await run(execArgs(join(w, 'lock'), ['--program', join(w, 'none'), ...policy(w)], ['named']), {
      env: {...process.env, PATH: `${first}:/usr/bin:/bin`},
    })
    expect(missing.code).toBe(127)
    expect(missing.report).toMatch(/^exec ENOENT .+\n$/)
  })

  it('reports a command that does not exist as exec ENOENT, status 127', async () => {
    const w = world('exec-enoent')
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['hmm-no-such-command-here']))
    expect(r.code).toBe(127)
    expect(r.report).toMatch(/^exec ENOENT .+\n$/)
  })

  const nobody = process.getuid!() === 0 ? unreachableBy(65534, 65534) : undefined
  it.skipIf(nobody !== undefined)(
    `reports a command as ENOENT, 127, when PATH holds a directory it may not search, as a shell would${nobody ? ` (skipped: ${nobody})` : ''}`,
    async () => {
      // E.g. root's ~/.cargo/bin left in a plain user's PATH: it holds no
      // command the user could have meant. Root searches every directory, so
      // as root the helper runs as nobody here.
      const w = world('exec-path-unsearchable')
      const blocked = join(w, 'blocked')
      mkdirSync(blocked, {mode: 0o700})
      const user = process.getuid!() === 0 ? {uid: 65534, gid: 65534} : {}
      if (process.getuid!() === 0) chmodSync(w, 0o777)
      else chmodSync(blocked, 0)
      const r = await run(execArgs(join(w, 'lock'), policy(w), ['hmm-no-such-command-here']), {
        env: {...process.env, PATH: `${blocked}:/usr/bin:/bin`},
        ...user,
      })
      expect(r.code).toBe(127)
      expect(r.report).toMatch(/^exec ENOENT .+\n$/)
    },
  )

  it('reports a file that is not executable as exec EACCES, status 126', async () => {
    const w = world('exec-eacces')
    const file = join(w, 'script')
    writeFileSync(file, '#!/bin/sh\necho ran\n')
    chmodSync(file, 0o644)
    const r = await run(execArgs(join(w, 'lock'), policy(w), [file]))
    expect(r.code).toBe(126)
    expect(r.report).toMatch(/^exec EACCES .+\n$/)
    expect(r.stdout).toBe('')
  })

  it('reports a command the sandbox does not let it run as exec EACCES', async () => {
    const w = world('exec-denied')
    // No rights at all: not even /bin/sh may be executed.
    const r = await run(execArgs(join(w, 'lock'), [], ['/bin/sh', '-c', 'echo ran']))
    expect(r.code).toBe(126)
    expect(r.report).toMatch(/^exec EACCES /)
    expect(r.stdout).toBe('')
  })

  it.each([
    ['no --', ['--lock', 'LOCK', 'true']],
    ['an empty command', ['--lock', 'LOCK', '--']],
    ['no --lock', ['--', 'true']],
    ['an unknown flag', ['--lock', 'LOCK', '--bogus', 'x', '--', 'true']],
    ['a flag without its value', ['--lock', 'LOCK', '--read']],
  ])('refuses bad usage (%s) as setup, status 125, running nothing', async (_, rest) => {
    const w = world('exec-usage')
    const args = ['exec', '--report-fd', '3', ...rest.map(a => (a === 'LOCK' ? join(w, 'lock') : a))]
    const r = await run(args)
    expect(r.code).toBe(125)
    expect(r.report).toMatch(/^setup usage: hmm-helper exec .*\n$/)
    expect(r.report.split('\n')).toHaveLength(2)
  })

  it('refuses paths that are not absolute and canonical, since hiding compares bytes', async () => {
    const w = world('exec-canonical')
    for (const bad of ['relative/path', '/a/../b', '/a/./b', '/a//b', '/a/b/']) {
      const r = await run(execArgs(join(w, 'lock'), ['--hide', bad], ['true']))
      expect(r.code, bad).toBe(125)
      expect(r.report, bad).toMatch(/^setup --hide needs an? (absolute|canonical) path: /)
    }
  })

  it('skips grant paths that do not exist (caches need not)', async () => {
    const w = world('exec-missing-grant')
    const r = await run(execArgs(join(w, 'lock'), [...policy(w), '--write', join(w, 'no-such-cache'), '--hide', join(w, 'nope')], ['true']))
    expect(r).toMatchObject({code: 0, report: ''})
  })

  it('writes its own failures to stderr when there is no report descriptor', async () => {
    const w = world('exec-no-report')
    const r = await run(['exec', '--lock', join(w, 'lock'), 'true'], {reportPipe: false})
    expect(r.code).toBe(125)
    expect(r.stderr).toMatch(/^hmm-helper: usage: /)
    const missing = await run(['exec', '--lock', join(w, 'lock'), ...policy(w), '--', 'hmm-no-such-command-here'], {
      reportPipe: false,
    })
    expect(missing.code).toBe(127)
    expect(missing.stderr).toBe('hmm-helper: hmm-no-such-command-here: No such file or directory\n')
  })

  it('refuses a report descriptor that is not open', async () => {
    const w = world('exec-bad-report')
    const r = await run(['exec', '--lock', join(w, 'lock'), '--report-fd', '9', '--', 'true'], {reportPipe: false})
    expect(r.code).toBe(125)
    expect(r.stderr).toBe('hmm-helper: --report-fd 9 is not open\n')
  })

  it('cannot take a lock it cannot open: setup failure, status 125', async () => {
    const w = world('exec-bad-lock')
    const r = await run(execArgs(join(w, 'no', 'such', 'dir', 'lock'), policy(w), ['true']))
    expect(r.code).toBe(125)
    expect(r.report).toMatch(/^setup cannot open the lock .*: No such file or directory\n$/)
  })

  it('starts the command in --chdir DIR, and fails set-up if it cannot enter it', async () => {
    const w = world('exec-chdir')
    const r = await run(['exec', '--lock', join(w, 'lock'), '--report-fd', '3', '--chdir', w, ...policy(w), '--', 'pwd'])
    expect(r).toMatchObject({code: 0, stdout: `${w}\n`, report: ''})
    const bad = await run(['exec', '--lock', join(w, 'lock'), '--report-fd', '3', '--chdir', join(w, 'nope'), ...policy(w), '--', 'pwd'])
    expect(bad.code).toBe(125)
    expect(bad.report).toBe(`setup cannot enter ${join(w, 'nope')}: No such file or directory\n`)
    expect(bad.stdout).toBe('')
  })

  // Attacker's review 24, F1: the tree is the command's, and a link it put in a directory's place led the next
  // command anywhere, /proc/self/cwd/.. to the directory the helper was started in (the user's real one).
  it('enters --chdir from --chdir-top through directories alone; with a link on the way, or none there, starts at the top and says so', async () => {
    const w = world('exec-chdir-top')
    const top = join(w, 'tree')
    const outside = join(w, 'outside')
    mkdirSync(join(top, 'real', 'b'), {recursive: true})
    mkdirSync(join(outside, 'x'), {recursive: true})
    mkdirSync(join(outside, 'b'))
    symlinkSync(outside, join(top, 'out'))
    symlinkSync('real', join(top, 'in'))
    symlinkSync('/proc/self/cwd/..', join(top, 'magic'))
    const pwd = (dir: string, topArgs = ['--chdir-top', top]) =>
      run(['exec', '--lock', join(w, 'lock'), '--report-fd', '3', '--chdir', dir, ...topArgs, ...policy(w), '--', 'pwd'], {cwd: join(outside, 'x')})
    // Without a top, a link on the way fails the set-up; a start outside the top is refused.
    const linked = await pwd(join(top, 'out', 'b'), [])
    expect(linked).toMatchObject({code: 125, stdout: ''})
    expect(linked.report).toBe(`setup cannot enter ${join(top, 'out', 'b')}: Too many levels of symbolic links\n`)
    const elsewhere = await pwd(join(outside, 'b'))
    expect(elsewhere).toMatchObject({code: 125, stdout: '', report: `setup --chdir-top needs a --chdir at or beneath it: ${top}\n`})
    expect(await pwd(join(top, 'real', 'b'))).toMatchObject({code: 0, stdout: `${join(top, 'real', 'b')}\n`, stderr: '', report: ''})
    expect(await pwd(top)).toMatchObject({code: 0, stdout: `${top}\n`, stderr: '', report: ''})
    for (const link of ['out', 'in', 'magic']) {
      const dir = join(top, link, 'b')
      const r = await pwd(dir)
      expect(r, link).toMatchObject({code: 0, stdout: `${top}\n`, report: ''})
      expect(r.stderr, link).toBe(`hmm: cannot enter ${dir} (a link on the way); the command starts at ${top}\n`)
    }
    const missing = await pwd(join(top, 'nope'))
    expect(missing).toMatchObject({code: 0, stdout: `${top}\n`, report: ''})
    expect(missing.stderr).toBe(`hmm: cannot enter ${join(top, 'nope')} (No such file or directory); the command starts at ${top}\n`)
  })

  it('keeps nothing of the directory it was started in: without --chdir the command starts at /', async () => {
    const w = world('exec-no-chdir')
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['sh', '-c', 'pwd; readlink /proc/self/cwd']), {cwd: w})
    expect(r).toMatchObject({code: 0, stdout: '/\n/\n', report: ''})
  })

  describe('--wait-fd', () => {
    const start = (w: string) => {
      const lock = join(w, 'lock')
      const child = spawn(
        helper,
        ['exec', '--lock', lock, '--report-fd', '3', '--wait-fd', '4', ...policy(w), '--', 'sh', '-c', 'echo ran; ls /proc/self/fd'],
        {stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe']},
      )
      return {child, lock, outcome: collect(child), go: child.stdio[4] as NodeJS.WritableStream}
    }

    it('holds the lock but runs nothing until hmm says go', async () => {
      const w = world('exec-wait-go')
      const {child, lock, outcome, go} = start(w)
      let out = ''
      child.stdout!.on('data', (b: Buffer) => (out += b))
      await until(() => isLocked(lock), 5_000, 'the helper to take the lock')
      await sleep(300)
      expect(out).toBe('')
      expect(child.exitCode).toBe(null)
      go.end('g')
      const r = await outcome
      expect(r).toMatchObject({code: 0, report: ''})
      expect(r.stdout.split('\n')[0]).toBe('ran')
      // the go-ahead descriptor is not the command's
      expect(
        r.stdout
          .split('\n')
          .slice(1)
          .filter(Boolean)
          .map(Number)
          .filter(n => n === 4),
      ).toEqual([])
      expect(isLocked(lock)).toBe(false)
    })

    it('runs nothing and releases the lock when hmm goes away without saying go', async () => {
      const w = world('exec-wait-gone')
      const {lock, outcome, go} = start(w)
      await until(() => isLocked(lock), 5_000, 'the helper to take the lock')
      go.end()
      const r = await outcome
      expect(r.code).toBe(125)
      expect(r.report).toBe('setup hmm gave up before the command started\n')
      expect(r.stdout).toBe('')
      expect(isLocked(lock)).toBe(false)
    })

    it('refuses a descriptor that is not open', async () => {
      const w = world('exec-wait-bad')
      const r = await run(['exec', '--lock', join(w, 'lock'), '--report-fd', '3', '--wait-fd', '9', '--', 'true'])
      expect(r.code).toBe(125)
      expect(r.report).toBe('setup --wait-fd needs an open descriptor of 3 or more: 9\n')
    })
  })

  it('gives the command no io_uring (a ring holds registered files with no descriptor to show), with or without --net', async () => {
    const w = world('exec-io-uring')
    // io_uring_setup(8, params): 425 on x86_64 and aarch64 alike.
    const probe = `import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); params = ctypes.create_string_buffer(120); r = libc.syscall(425, 8, params); print('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()])`
    const r = await run(execArgs(join(w, 'lock'), policy(w), ['python3', '-c', probe]))
    expect(r).toMatchObject({code: 0, stdout: 'ENOSYS\n', report: ''})
  })

  it('reads no environment variable: the policy is only in argv', async () => {
    const w = world('exec-env')
    // An environment full of plausible knobs changes nothing.
    const env = {...process.env, HMM_HOME: '/', HMM_DEBUG: '1', LANDLOCK: '0', HMM_SANDBOX: 'off'}
    const child = spawn(helper, execArgs(join(w, 'lock'), policy(w), ['sh', '-c', 'echo x > /hmm-env-test']), {
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    })
    const r = await collect(child)
    expect(r.code).not.toBe(0)
    expect(r.report).toBe('')
  })
})
