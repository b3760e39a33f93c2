// An interactive shell under `hmm run` on a real pseudo-terminal: the
// terminal works as usual (job control, Ctrl-C, Ctrl-Z, resize, colours)
// while the command cannot type into it (TIOCSTI fails), and, on a terminal
// of its own that the helper relays (native-helpers/pty.c), nothing of it
// reads what the user types once hmm is stopped or has returned.
import {execa} from 'execa'
import {mkdirSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, onTestFinished} from 'vitest'
import {BIN, hmmCommand, PROJECT, shellQuote, whenWritten, World} from '../world.js'

let world: World
beforeAll(() => {
  world = new World('terminal')
  world.file('fg.py', FOREGROUND)
  world.file('hold.py', HOLDER)
  world.file('steal.py', STEAL)
})
afterAll(() => world.dispose())

type Step = {expect: string} | {send: string} | {resize: [number, number]} | {hangup: true}

/** Runs argv on a new pseudo-terminal (its controlling terminal), typing the steps. */
async function onPty(steps: Step[], argv: string[]): Promise<{status: number; transcript: string; failed: string | null}> {
  const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), JSON.stringify(steps), ...argv], {
    cwd: world.origin,
    env: {...world.env, TERM: 'xterm-256color'},
    extendEnv: false,
    reject: false,
  })
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

const prompt = {expect: 'PROMPT> '}

// A job (fg.py in the workspace) that says whenever it comes to hold the
// terminal or loses it, so that no key is typed before the terminal is its.
const FOREGROUND = `
import os, time
held = None
while True:
    holds = os.tcgetpgrp(0) == os.getpgrp()
    if holds != held:
        print('holds', holds, flush=True)
        held = holds
    time.sleep(0.05)
`
// A process the command leaves in the background, in a session of its own (the token in its argv
// marks it for pgrep), ready once it holds what `how` says; given a file "go" (hmm has returned by
// then), it tries to read the user's terminal that way and writes what came of it to how.result:
//   inherited: the terminal it was given (its stdout), kept;
//   reopened:  that terminal opened again by its name;
//   quiet:     its output elsewhere (nohup), still in the terminal's session; opens /dev/tty;
//   nested:    attack-report 3's F6: a child in a user and mount namespace of its own hands it an
//              O_PATH descriptor of that namespace's /dev and one of the namespace (neither is a
//              terminal), through which it opens "console", "tty" and the terminal's name.
const HOLDER = `
import ctypes, errno, os, socket, sys, time
how = sys.argv[1]
name = os.ttyname(1)
def attempt(open_it):
    try:
        fd = open_it()
    except OSError as error:
        return errno.errorcode[error.errno]
    try:
        return 'read:' + repr(os.read(fd, 1024))
    except OSError as error:
        return 'read-' + errno.errorcode[error.errno]
if how == 'nested':
    here, there = socket.socketpair()
    if os.fork() == 0:
        assert ctypes.CDLL(None).unshare(0x10000000 | 0x20000) == 0  # CLONE_NEWUSER | CLONE_NEWNS
        dev = os.open('/dev', os.O_PATH | os.O_DIRECTORY)
        socket.send_fds(there, [b'x'], [dev, os.open('/proc/self/ns/mnt', os.O_RDONLY)])
        time.sleep(600)
    _, (dev, ns), _, _ = socket.recv_fds(here, 1, 2)
if how == 'reopened':
    held = os.open(name, os.O_RDWR | os.O_NOCTTY)
if how != 'quiet':
    os.setsid()
if how != 'inherited':
    null = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
open(how + '.ready', 'w').close()
while not os.path.exists('go'):
    time.sleep(0.05)
if how == 'inherited':
    result = [attempt(lambda: 1)]
elif how == 'reopened':
    result = [attempt(lambda: held)]
elif how == 'quiet':
    result = [attempt(lambda: os.open('/dev/tty', os.O_RDWR))]
else:
    result = [attempt(lambda: os.open(n, os.O_RDWR | os.O_NOCTTY, dir_fd=dev)) for n in ('console', 'tty', name[5:])]
open(how + '.result', 'w').write(' '.join(result))
time.sleep(600)
`
// Attack-report 3's F11: a process of the command in a process group of its own, ignoring the
// stop signals (as editors do), that once given "go" makes itself its terminal's foreground and
// reads what is typed there (steal.took: how that went; steal.read: what it read).
const STEAL = `
import errno, os, signal, time
for s in (signal.SIGTSTP, signal.SIGTTOU, signal.SIGTTIN):
    signal.signal(s, signal.SIG_IGN)
tty = os.open('/dev/tty', os.O_RDWR)
os.setpgid(0, 0)
open('steal.ready', 'w').close()
while not os.path.exists('go'):
    time.sleep(0.05)
try:
    os.tcsetpgrp(tty, os.getpgrp())
    took = 'took'
except OSError as error:
    took = errno.errorcode[error.errno]
open('steal.took', 'w').write(took)
data = os.read(tty, 1024)
open('steal.read', 'w').write(repr(data))
`
const type = (line: string): Step[] => [{send: `${line}\r`}]

/** The shell each case types into, started by hmm run or running hmm itself. */
const BASH = ['bash', '--norc', '--noprofile', '-i']
const hmm = hmmCommand()
/** Until the shell's prompt is one no output can be taken for. */
const START: Step[] = [{expect: '[#$] '}, ...type(`PS1='PROM''PT> '; bind 'set enable-bracketed-paste off'`), prompt]
/** Ctrl-Z stops the foreground job, bg continues it in the background, fg gives it the terminal back, Ctrl-C ends it and not the shell. */
const JOB_CONTROL: Step[] = [
  ...type('python3 fg.py'),
  {expect: 'holds True'},
  {send: '\x1a'},
  {expect: '\\[1\\]\\+\\s+Stopped\\s+python3 fg.py'},
  prompt,
  ...type('bg'),
  {expect: 'holds False'},
  ...type('fg'),
  {expect: 'holds True'},
  {send: '\x03'},
  {expect: 'KeyboardInterrupt'},
  prompt,
]
// Marks the processes the background case leaves, for pgrep.
const token = `hold-${process.pid}-${Date.now()}`
const kinds = ['inherited', 'reopened', 'quiet', 'nested']
const leave = `for h in ${kinds.join(' ')}; do python3 hold.py $h ${token}-$h & done; until test ${kinds.map(h => `-e ${h}.ready`).join(' -a ')}; do sleep 0.05; done; echo holders-"ready"`
/** A command that leaves steal.py (STEAL) running, then reads its terminal. */
const stealing = `sh -c 'python3 steal.py & until test -e steal.ready; do sleep 0.05; done; echo steal-"ready"; exec cat'`
/** Once hmm is stopped or in the background: the thief takes its terminal's foreground, the user's next line is still the shell's. */
const NOT_STOLEN = (name: string): Step[] => [
  ...type(`t=$(${hmm} path ${name}); touch "$t/go"; until test -e "$t/steal.took"; do sleep 0.05; done; echo "steal-$(cat "$t/steal.took")"`),
  {expect: '\r\nsteal-took\r\n'}, // its own terminal's foreground
  prompt,
  ...type('echo typed-"secret"'),
  {expect: '\r\ntyped-secret\r\n'},
  prompt,
  ...type(`cat "$t/steal.read" 2>/dev/null || echo nothing-"read"`),
  {expect: '\r\nnothing-read\r\n'},
  prompt,
  // (its own terminal's foreground is the thief's now: the rest of the command would stop again reading it)
  ...type('kill -KILL %1; while kill -0 %1 2>/dev/null; do sleep 0.05; done; echo hmm-"gone"'),
  {expect: '\r\nhmm-gone\r\n'},
  prompt,
  ...type('exit 0'),
]

interface Case {
  argv: string[]
  /** Typed and seen after the first prompt. */
  steps: Step[]
  /** Stops what the case leaves, should it fail. */
  cleanup?: () => Promise<void>
}

describe('a shell under hmm run on a terminal', () => {
  it.each<[string, Case]>([
    [
      'has job control, Ctrl-C, Ctrl-Z, resize and colours, and cannot push input with TIOCSTI',
      {
        argv: [process.execPath, BIN, 'run', '--rm', ...BASH],
        steps: [
          ...type('stty size'),
          {expect: '\r\n24 80\r\n'},
          prompt,
          // resize: SIGWINCH reaches the foreground program, and the size changes
          ...type(
            `python3 -c 'import os, signal; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH]); print("waiting" + "-for-winch", flush=True); signal.sigwait([signal.SIGWINCH]); print("winch", *reversed(os.get_terminal_size()))'`,
          ),
          {expect: 'waiting-for-winch'},
          {resize: [40, 100]},
          {expect: 'winch 40 100'},
          prompt,
          ...type('stty size'),
          {expect: '\r\n40 100\r\n'},
          prompt,
          // colours: escape sequences pass through, terminfo is readable
          ...type(`printf '\\033[31m%s\\033[0m\\n' red-text; tput colors`),
          {expect: '\x1b\\[31mred-text\x1b\\[0m\r\n256\r\n'},
          prompt,
          // job control: a background job, jobs, kill
          ...type('sleep 30 &'),
          {expect: '\\[1\\] \\d+'},
          prompt,
          ...type('jobs'),
          {expect: '\\[1\\]\\+\\s+Running\\s+sleep 30 &'},
          prompt,
          ...type('kill %1; wait %1; echo "status-$?"'),
          {expect: '\r\nstatus-143\r\n'},
          prompt,
          ...JOB_CONTROL,
          ...type('echo "status-$?"'),
          {expect: '\r\nstatus-130\r\n'},
          prompt,
          // and no typing into the terminal
          ...type(`python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b"x")' 2>&1 | tail -1`),
          {expect: 'PermissionError: \\[Errno 1\\] Operation not permitted'},
          prompt,
          ...type('exit'),
        ],
      },
    ],
    [
      "Ctrl-C ends the command through the workspace's PID namespace: hmm exits 130, the workspace is kept as done, the terminal is the shell's again",
      {
        argv: BASH,
        steps: [
          // The command as the user's shell starts it (on a terminal of its own that the helper relays).
          ...type(`${hmm} run -n ctrl-c sh -c 'echo ready-for-"ctrl-c"; exec sleep 600'`),
          // Not the echo of the line typed: the command's own output.
          {expect: 'ready-for-ctrl-c'},
          {send: '\x03'},
          {expect: 'hmm: workspace [0-9a-z]{6} \\(ctrl-c\\): '},
          prompt,
          ...type('echo "status-$?"'),
          {expect: '\r\nstatus-130\r\n'},
          prompt,
          ...type(`${hmm} ls --json | python3 -c 'import json, sys; print(*[w["state"] + "-state" for w in json.load(sys.stdin) if w["name"] == "ctrl-c"])'`),
          {expect: '\r\ndone-state\r\n'},
          prompt,
          ...type(`${hmm} diff ctrl-c; echo "diff-$?"`),
          {expect: '\r\ndiff-0\r\n'},
          prompt,
          // The shell holds the terminal again: a job of its own gets it, Ctrl-Z and Ctrl-C reach that job.
          ...JOB_CONTROL,
          ...type('exit 0'),
        ],
      },
    ],
    [
      'uses its own terminal as before, in a /dev of its own: /dev/tty, /dev/stderr, its name, ptys it opens, script',
      {
        argv: [process.execPath, BIN, 'run', '--rm', ...BASH],
        steps: [
          ...type(`echo to-tty > /dev/tty; echo to-stderr > /dev/stderr; python3 -c 'open("/dev/stdout", "w").write("via-" "stdout\\n")'`),
          {expect: '\r\nto-tty\r\nto-stderr\r\nvia-stdout\r\n'},
          prompt,
          // Its name leads back to it.
          ...type(`test "$(stat -Lc %t:%T "$(tty)")" = "$(stat -Lc %t:%T /proc/self/fd/0)" && echo "named-$?"`),
          {expect: '\r\nnamed-0\r\n'},
          prompt,
          ...type(`python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"in-pty\\n"); print(os.read(m, 64))'`),
          {expect: "\r\nb'in-pty\\\\r\\\\n'\r\n"},
          prompt,
          ...type(`script -qec 'tty; echo "inside-"script' /dev/null`),
          {expect: '\r\n/dev/pts/\\d+\r\ninside-script\r\n'},
          prompt,
          ...type('exit'),
        ],
      },
    ],
    [
      "leaves nothing that reads the user's terminal once hmm has returned, however it kept the command's (attack-report 3, F6)",
      {
        argv: BASH,
        steps: [
          ...type(`${hmm} run -n bg sh -c '${leave}'`),
          {expect: 'holders-ready'},
          prompt,
          // hmm has returned; each tries to read the terminal it kept (a read of the user's would wait for the next line; one that is gone says so).
          ...type(
            `t=$(${hmm} path bg); touch "$t/go"; for h in ${kinds.join(' ')}; do until test -e "$t/$h.result" || ! pgrep -f "${token}-$h" >/dev/null; do sleep 0.05; done; echo "$h: $(cat "$t/$h.result" 2>/dev/null || echo gone)"; done`,
          ),
          {expect: "\r\ninherited: read:b''\r\nreopened: read:b''\r\nquiet: ENXIO\r\nnested: ENOENT ENXIO ENOENT\r\n"},
          prompt,
          // The user's next line is the shell's.
          ...type('echo typed-"secret"'),
          {expect: '\r\ntyped-secret\r\n'},
          prompt,
          // (the helper's own argv holds the token followed by "$h")
          ...type(`${hmm} stop bg >/dev/null 2>&1; pgrep -f "${token}-[a-z]" >/dev/null || echo "all-stopped"`),
          {expect: '\r\nall-stopped\r\n'},
          prompt,
          ...type('exit 0'),
        ],
        cleanup: async () => void (await world.hmm(['stop', 'bg'])),
      },
    ],
    [
      "Ctrl-Z stops hmm as a job of the shell (the terminal is the shell's again) and fg continues the command where it was",
      {
        argv: BASH,
        steps: [
          ...type(`${hmm} run -n suspend sh -c 'echo ready-to-"cat"; cat; echo cat-"ended"'`),
          {expect: 'ready-to-cat'},
          ...type('first'),
          {expect: '\r\nfirst\r\nfirst\r\n'}, // the pty's echo, then cat's
          {send: '\x1a'},
          {expect: '\\[1\\]\\+\\s+Stopped\\s+'},
          prompt,
          ...type('echo at-the-"shell"'),
          {expect: '\r\nat-the-shell\r\n'},
          prompt,
          ...type('fg'),
          ...type('second'),
          {expect: '\r\nsecond\r\nsecond\r\n'},
          {send: '\x04'},
          {expect: 'cat-ended\r\n'},
          {expect: 'hmm: workspace [0-9a-z]{6} \\(suspend\\): '},
          prompt,
          ...type('echo "status-$?"'),
          {expect: '\r\nstatus-0\r\n'},
          prompt,
          ...type('exit 0'),
        ],
      },
    ],
    [
      "after Ctrl-Z nothing of the command takes the user's terminal from the shell (attack-report 3, F11)",
      {
        argv: BASH,
        steps: [
          ...type(`${hmm} run -n ctrl-z ${stealing}`),
          {expect: 'steal-ready'},
          {send: '\x1a'},
          {expect: '\\[1\\]\\+\\s+Stopped\\s+'},
          prompt,
          ...NOT_STOLEN('ctrl-z'),
        ],
        cleanup: async () => void (await world.hmm(['stop', 'ctrl-z'])),
      },
    ],
    [
      "started in the background (hmm run ... &), nothing of the command takes the user's terminal from the shell (attack-report 3, F11)",
      {
        argv: BASH,
        steps: [...type(`${hmm} run -n in-bg ${stealing} &`), {expect: 'steal-ready'}, ...NOT_STOLEN('in-bg')],
        cleanup: async () => void (await world.hmm(['stop', 'in-bg'])),
      },
    ],
  ])(
    '%s',
    async (_, {argv, steps, cleanup}) => {
      if (cleanup) onTestFinished(cleanup)
      const seen = await onPty([...START, ...steps], argv)
      expect(seen.failed, seen.transcript).toBe(null)
      expect(seen.status, seen.transcript).toBe(0)
    },
    90_000, // the driver gives up on a step after 30 s
  )
})

describe('a program under hmm run on a terminal', () => {
  it('sees a terminal it can make raw, and none of its output is lost when it exits at once', async () => {
    const program = `
import os, sys, termios, tty
print('terminal', os.isatty(0), os.isatty(1), os.isatty(2), len(termios.tcgetattr(0)), flush=True)
saved = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b'raw-ready\\r\\n')
data = os.read(0, 3)
termios.tcsetattr(0, termios.TCSADRAIN, saved)
print('read', data.hex())
sys.stdout.write('x' * 300000 + '\\nlast-line\\n')
`
    world.file('raw.py', program)
    const seen = await onPty(
      [{expect: 'raw-ready'}, {send: 'a\x03\x1a'}, {expect: '\r\nread 61031a\r\n'}, {expect: 'last-line'}],
      [process.execPath, BIN, 'run', '--rm', 'python3', 'raw.py'],
    )
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
    expect(seen.transcript).toContain('terminal True True True 7')
    expect(seen.transcript).toContain(`\r\n${'x'.repeat(300000)}\r\nlast-line\r\n`)
  }, 90_000)

  it('gets its own terminal only in place of those of its descriptors that are terminals; a pipe stays the pipe', async () => {
    const seen = await onPty(
      [{expect: '\r\n/dev/pts/0\r\npipe:\\[\\d+\\]\r\n/dev/pts/0\r\n'}],
      ['sh', '-c', `${hmm} run --rm readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 | cat`],
    )
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
  }, 90_000)
})

describe("the user's terminal when hmm's helper is killed", () => {
  it('is set back as it was once hmm returns, though the helper that had it raw could not (Node restores the modes it found)', async () => {
    const marks = join(world.root, 'killed')
    mkdirSync(marks)
    onTestFinished(async () => void (await world.hmm(['rm', '-f', 'killed'])))
    const running = onPty(
      [
        ...START,
        ...type(`${hmm} run -w ${shellQuote(marks)} -n killed sh -c ${shellQuote(`touch ${shellQuote(marks)}/ready; exec sleep 600`)}; echo "status-$?"`),
        {expect: 'status-137\r\n'}, // (hmm's own last line came while the terminal was still raw)
        prompt,
        ...type(`stty -a | tr ' ' '\\n' | grep -x -e '-\\?icanon' -e '-\\?echo'`),
        {expect: '\r\nicanon\r\necho\r\n'},
        prompt,
        ...type('exit 0'),
      ],
      BASH,
    )
    await whenWritten(join(marks, 'ready'))
    // The helper hmm started (the waiter, relaying the terminal); the init and the command are its children.
    // Found through hmm's process: the helper's own arguments are blanked once read. hmm's is
    // matched from its program on: the pty driver's arguments hold the same words, as typed.
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const hmmProcess = await execa('pgrep', ['-o', '-f', `^${literal(process.execPath)} .*run -w ${literal(marks)} -n killed`])
    const waiter = await execa('pgrep', ['-P', hmmProcess.stdout, '-f', 'hmm-helper exec'])
    process.kill(Number(waiter.stdout), 'SIGKILL')
    const seen = await running
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
  }, 90_000)
})

describe('a command that ignores Ctrl-C and Ctrl-Z, without the namespaces (landlock-only; attack-4, F5)', () => {
  it('has Ctrl-Z still stop hmm and give the shell its terminal back; kill -KILL %1 ends it', async () => {
    const config = world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    onTestFinished(async () => {
      rmSync(config)
      await world.hmm(['rm', '-f', 'keys'])
    })
    const seen = await onPty(
      [
        ...START,
        ...type(`${hmm} run -n keys sh -c 'trap "" INT TSTP QUIT; echo ignoring-"keys"; exec sleep 600'`),
        {expect: 'ignoring-keys'},
        {send: '\x1a'},
        {expect: '\\[1\\]\\+\\s+Stopped\\s+'},
        prompt,
        ...type('echo at-the-"shell"'),
        {expect: '\r\nat-the-shell\r\n'},
        prompt,
        // The command ran on meanwhile (Stopped is hmm alone); KILL to the job's process group ends it with hmm.
        ...type('pg=$(jobs -p %1); kill -KILL %1; while pgrep -g "$pg" >/dev/null; do sleep 0.05; done; echo group-"gone"'),
        {expect: '\r\ngroup-gone\r\n'},
        prompt,
        ...type('exit 0'),
      ],
      BASH,
    )
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
  }, 90_000)
})

describe('closing the terminal hmm run runs on', () => {
  it('gives the command the hangup it would get outside, and hmm records its end', async () => {
    onTestFinished(async () => {
      await world.hmm(['rm', '-f', 'hup'])
    })
    const script = 'trap "echo hangup > got; exit 3" HUP; echo ready; while :; do sleep 0.1; done'
    const seen = await onPty([{expect: 'ready'}, {hangup: true}], [process.execPath, BIN, 'run', '-n', 'hup', 'sh', '-c', script])
    expect(seen.failed, seen.transcript).toBe(null)
    const tree = (await world.hmm(['path', 'hup'])).stdout.trim()
    expect(readFileSync(join(tree, 'got'), 'utf8')).toBe('hangup\n')
    const listed = JSON.parse((await world.hmm(['ls', '--json'])).stdout) as Array<{name: string; state: string}>
    expect(listed.find(workspace => workspace.name === 'hup')?.state).toBe('done')
  })
})
