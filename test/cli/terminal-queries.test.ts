// What the command's output makes the user's terminal do (attacker's review 5, F1): hmm
// relays the output of the command's own terminal to the user's (native-helpers/pty.c)
// through a filter (term-filter.c), so the command cannot have the terminal answer with
// what it holds (the clipboard, its colours) or write the clipboard; and answers the
// terminal still owes when the command ends do not reach the user's shell. tmux stands in
// for the user's terminal where what matters is what a real one answers; a terminal that
// answers late (test/late-terminal.py) where what matters is when.
import {execa} from 'execa'
import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, onTestFinished} from 'vitest'
import {BIN, hmmCommand, PROJECT, shellQuote, whenWritten, World} from '../world.js'

let world: World
let results: string
beforeAll(() => {
  world = new World('terminal-queries')
  results = join(world.root, 'results')
  mkdirSync(results)
  world.file('ask.py', ASK)
  world.file('owed.py', OWED)
})
afterAll(() => world.dispose())

// The command: its terminal raw, it asks what it is given, then the cursor's position, and
// reads up to that answer: the terminal answers in order, so whatever the queries before it
// got came first. Writes what came before it (hex) to argv[2].
const ASK = `
import os, re, sys, tty
tty.setraw(0)
os.write(1, bytes.fromhex(sys.argv[1]) + b'\\x1b[6n')
got = b''
while not (found := re.search(rb'\\x1b\\[\\d+;\\d+R$', got)):
    got += os.read(0, 1024)
open(sys.argv[2], 'w').write(got[:found.start()].hex() or '-')
`
// The user's shell once hmm has returned: what is waiting in its terminal's input, found by
// asking the terminal a question and reading up to its answer (CSI 0 n), which comes after
// anything it owed.
const OWED = `
import os, termios, tty
saved = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b'\\x1b[5n')
got = b''
while not got.endswith(b'\\x1b[0n'):
    got += os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, saved)
print('owed', got[:-4].hex() or '-')
`
const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex')
const hmm = hmmCommand()

describe("the command's output on the user's terminal (tmux)", () => {
  it("cannot read the user's clipboard or colours, or write the clipboard (OSC 52, OSC 10/11/4 ?)", async () => {
    const socket = join(world.root, 'tmux')
    const tmux = (args: string[]) => execa('tmux', ['-S', socket, ...args], {env: world.env, extendEnv: false})
    // exit-empty off: the server (and its buffer) outlives the session, which ends with hmm.
    const conf = world.write(join(world.root, 'tmux.conf'), 'set -s set-clipboard on\nset -s exit-empty off\nset-buffer hunter2-COPIED\n')
    onTestFinished(async () => void (await tmux(['kill-server']).catch(() => {})))
    const queries = [
      '\x1b]52;c;cGxhbnRlZA==\x07', // sets the clipboard to "planted"
      '\x1b]52;c;?\x07',
      '\x1b]11;?\x07',
      '\x1b]10;?\x1b\\',
      '\x1b]4;1;?\x07',
    ].join('')
    const got = join(results, 'asked')
    const command = `${hmm} run --rm -w ${shellQuote(results)} python3 ask.py ${hex(queries)} ${shellQuote(got)} 2>/dev/null`
    await tmux(['-f', conf, 'new-session', '-d', '-x', '80', '-y', '24', '-c', world.origin, command])
    const before = await whenWritten(got)
    expect(Buffer.from(before === '-' ? '' : before, 'hex').toString('latin1')).toBe('')
    expect((await tmux(['show-buffer'])).stdout).toBe('hunter2-COPIED')
  })
})

describe('answers the terminal still owes when the command ends', () => {
  /** `hmm run --rm sh -c SCRIPT`, then what the user's shell finds in its input, on a terminal that answers late. */
  async function lateRun(script: string): Promise<{owed: string; dsr: number; status: number}> {
    const run = `${hmm} run --rm sh -c '${script}' 2>/dev/null; echo "hmm-$?"; python3 owed.py`
    const result = await execa('python3', [join(PROJECT, 'test', 'late-terminal.py'), 'sh', '-c', run], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
    })
    const {transcript, dsr, status} = JSON.parse(result.stdout) as {transcript: string; dsr: number; status: number}
    expect(transcript).toMatch(/hmm-0\r\n/)
    return {owed: /owed (\S+)/.exec(transcript)![1]!, dsr, status}
  }

  it("are taken by hmm, not left to the user's shell (DA1 and the cursor position asked just before the end)", async () => {
    const seen = await lateRun('printf "\\033[c\\033[6n"')
    expect(seen.status).toBe(0)
    expect(seen.owed).toBe('-')
    expect(seen.dsr).toBe(2) // hmm's question, then the shell's
  })

  it('leave hmm waiting no longer than its bound on a terminal that never answers', async () => {
    const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), '[]', process.execPath, BIN, 'run', '--rm', 'printf', '\\033[6n'], {
      cwd: world.origin,
      env: world.env,
      extendEnv: false,
    })
    const seen = JSON.parse(result.stdout) as {status: number; failed: string | null; transcript: string}
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
    expect(seen.transcript).toContain('\x1b[6n\x1b[5n') // asked, and hmm's question after it
  })

  it('cost nothing when the command asked nothing: hmm asks the terminal nothing', async () => {
    const seen = await lateRun('printf "\\033[31mred\\033[0m\\033[?1049h\\033[?1049l\\n"')
    expect(seen.owed).toBe('-')
    expect(seen.dsr).toBe(1) // the shell's alone
  })
})

describe("what the command can have the terminal open outside the sandbox (attacker's review 8, F1)", () => {
  it('is no directory (OSC 7: its tree would be where the next tab opens) and no link but to a web page', async () => {
    // printf's format; %s is the tree.
    const output = [
      '\\033]7;file://host%s\\033\\\\',
      '\\033]8;;vscode://file%s\\033\\\\the docs\\033]8;;\\033\\\\',
      '\\033]8;;file://host%s/.git/config\\007the config\\033]8;;\\007',
      '\\033]8;;https://docs.python.org/\\033\\\\python\\033]8;;\\033\\\\\\n',
    ].join('')
    const argv = [process.execPath, BIN, 'run', '--rm', 'sh', '-c', 'printf "$1" "$PWD" "$PWD" "$PWD"', 'sh', output]
    const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), '[]', ...argv], {cwd: world.origin, env: world.env, extendEnv: false})
    const seen = JSON.parse(result.stdout) as {status: number; failed: string | null; transcript: string}
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
    const shown = seen.transcript.slice(seen.transcript.indexOf('\n', seen.transcript.indexOf('hmm: workspace')) + 1)
    expect(shown).toBe('the docs\x1b]8;;\x1b\\the config\x1b]8;;\x07\x1b]8;;https://docs.python.org/\x1b\\python\x1b]8;;\x1b\\\r\n')
  })
})

describe("the user's terminal once the command has ended (attacker's review 8, F4 and F7)", () => {
  it("has the modes and renditions the command left set put back before hmm's closing line", async () => {
    const left = '\\033[8m\\033(0\\033[?1000;1006h\\033[?1004h\\033[>1u'
    const argv = [process.execPath, BIN, 'run', 'sh', '-c', `echo work > new; printf 'done${left}'`]
    const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), '[]', ...argv], {cwd: world.origin, env: world.env, extendEnv: false})
    const seen = JSON.parse(result.stdout) as {status: number; failed: string | null; transcript: string}
    expect(seen.failed, seen.transcript).toBe(null)
    expect(seen.status, seen.transcript).toBe(0)
    // Put back, then hmm's question (reports may have been on their way: hmm takes them), then its line.
    const putBack = '\x1b[<99u\x1b[?1000;1004;1006l\x1b[0m\x1b(B\x0f'
    const wrote = 'done\x1b[8m\x1b(0\x1b[?1000;1006h\x1b[?1004h\x1b[>1u'
    const after = seen.transcript.slice(seen.transcript.indexOf(wrote) + wrote.length)
    expect(after.slice(0, putBack.length + 4)).toBe(`${putBack}\x1b[5n`)
    expect(after.slice(putBack.length + 4)).toMatch(/^hmm: workspace \w+: .*\(1 file\)\r\n$/)
  })

  it('shows hmm its closing line, and the shell no reports, on a real terminal (tmux)', async () => {
    const socket = join(world.root, 'tmux-end')
    const tmux = (args: string[]) => execa('tmux', ['-S', socket, ...args], {env: world.env, extendEnv: false})
    onTestFinished(async () => void (await tmux(['kill-server']).catch(() => {})))
    const status = join(results, 'end-status')
    // The line-drawing set, application cursor keys and the alternate screen left on, mouse and focus reports too.
    const left = '\\033(0\\033[?1h\\033[?1049h\\033[?1000h\\033[?1004h'
    const command = `${hmm} run sh -c 'echo work > new; printf "done${left}"'; echo $? > ${shellQuote(status)}; exec sleep 60`
    await tmux(['-f', '/dev/null', 'new-session', '-d', '-x', '200', '-y', '24', '-c', world.origin, command])
    expect(await whenWritten(status)).toBe('0\n')
    const flags = await tmux(['display', '-p', '#{alternate_on} #{mouse_any_flag} #{keypad_cursor_flag}'])
    expect(flags.stdout).toBe('0 0 0')
    expect((await tmux(['capture-pane', '-p'])).stdout).toMatch(/hmm: workspace \w+: .*\(1 file\)/)
  })
})
