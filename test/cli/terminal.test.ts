// An interactive shell under `hmm run` on a real pseudo-terminal: the
// terminal works as usual (job control, Ctrl-C, Ctrl-Z, resize, colours)
// while the command cannot type into it (TIOCSTI fails).
import {execa} from 'execa'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, onTestFinished} from 'vitest'
import {BIN, PROJECT, World} from '../world.js'

let world: World
beforeAll(() => {
  world = new World('terminal')
  world.file('fg.py', FOREGROUND)
  world.file('hold.py', HOLDER)
})
afterAll(() => world.dispose())

type Step = {expect: string} | {send: string} | {resize: [number, number]}

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
// A process the command leaves in the background, ready once it holds what
// `how` says, then waiting for a file "go" (the token in its argv marks it for pgrep):
//   inherited: in a session of its own, keeps the terminal it was given;
//   reopened:  in a session of its own, opens the terminal again by name (attack-report's steal.py);
//   quiet:     its output elsewhere (nohup), still in the terminal's session; given "go", tries /dev/tty;
//   nested:    its output elsewhere, in a session and mount namespace of its own (where /dev/console
//              stays mounted whatever the workspace's init unmounts).
const HOLDER = `
import ctypes, errno, os, sys, time
how = sys.argv[1]
if how != 'quiet':
    name = os.ttyname(1)
    os.setsid()
if how == 'reopened':
    held = os.open(name, os.O_RDWR | os.O_NOCTTY)
if how == 'nested':
    CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x20000
    assert ctypes.CDLL(None).unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0
if how != 'inherited':
    null = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
open(how + '.ready', 'w').close()
while not os.path.exists('go'):
    time.sleep(0.05)
try:
    os.open('/dev/tty', os.O_RDWR)
    result = 'opened'
except OSError as error:
    result = errno.errorcode[error.errno]
open(how + '.result', 'w').write(result)
time.sleep(600)
`
const type = (line: string): Step[] => [{send: `${line}\r`}]

/** The shell each case types into, started by hmm run or running hmm itself. */
const BASH = ['bash', '--norc', '--noprofile', '-i']
const hmm = `'${process.execPath}' '${BIN}'`
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
const leave = `for h in inherited reopened quiet nested; do python3 hold.py $h ${token}-$h & done; until test -e inherited.ready -a -e reopened.ready -a -e quiet.ready -a -e nested.ready; do sleep 0.05; done; echo holders-"ready"`

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
          // The command as the user's shell starts it: hmm, the helper, its init and the command share the terminal.
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
      "keeps nothing it leaves in the background on the user's terminal once it exits; what let go of the terminal runs on",
      {
        argv: BASH,
        steps: [
          ...type(`${hmm} run -n bg sh -c '${leave}'`),
          {expect: 'holders-ready'},
          prompt,
          // hmm has returned: nothing of the workspace holds the terminal any more.
          ...type(`for h in inherited reopened quiet nested; do pgrep -f "${token}-$h" >/dev/null && echo "$h-alive" || echo "$h-gone"; done`),
          {expect: '\r\ninherited-gone\r\nreopened-gone\r\nquiet-alive\r\nnested-gone\r\n'},
          prompt,
          // The one left cannot open the terminal again either (it is still in the terminal's session).
          ...type(`t=$(${hmm} path bg); touch "$t/go"; until test -s "$t/quiet.result"; do sleep 0.05; done; echo "quiet-tty-$(cat "$t/quiet.result")"`),
          {expect: '\r\nquiet-tty-EROFS\r\n'}, // /dev/tty is the empty file the terminal's node was bound on
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
