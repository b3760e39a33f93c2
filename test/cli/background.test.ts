// Background runs (SPEC "Background runs"): `hmm run -d` returns at once and
// the command runs on a terminal hmm keeps; `hmm peek` shows what it wrote,
// `hmm attach` joins it on a real pseudo-terminal and leaves it running on
// Ctrl-]; its end is recorded (WORK) with nobody attached.
import {execa} from 'execa'
import {existsSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, PROJECT, workspaceLine, World} from '../world.js'

let world: World
beforeAll(() => {
  world = new World('background')
})
afterAll(async () => {
  // What a failed test left running goes first: no background run outlives the tests.
  const rows = JSON.parse((await world.hmm(['ls', '--json'])).stdout || '[]') as Row[]
  const running = rows.filter(entry => entry.state === 'running' || entry.state === 'waiting').map(entry => entry.id)
  if (running.length > 0) await world.hmm(['stop', ...running])
  world.dispose()
})

type Step = {expect: string} | {send: string}

/** Runs hmm with argv on a new pseudo-terminal, typing the steps (test/pty-driver.py). */
async function onPty(steps: Step[], args: string[]): Promise<{status: number; transcript: string; failed: string | null}> {
  const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), JSON.stringify(steps), process.execPath, BIN, ...args], {
    cwd: world.origin,
    env: {...world.env, TERM: 'xterm-256color'},
    extendEnv: false,
    reject: false,
  })
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

interface Row {
  id: string
  name: string | null
  state: string
  files: number | null
  exit: number | null
  signal: number | null
}

async function row(name: string): Promise<Row> {
  const listed = await world.hmm(['ls', '--json'])
  return (JSON.parse(listed.stdout) as Row[]).find(entry => entry.name === name)!
}

/** Waits (bounded: a hang, not a measure) until the workspace's row is as `done` says. */
async function until(name: string, done: (row: Row) => boolean): Promise<Row> {
  for (let waited = 0; ; waited += 100) {
    const now = await row(name)
    if (done(now)) return now
    if (waited > 30_000) throw new Error(`workspace ${name} stayed ${JSON.stringify(now)}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** Waits (bounded) until `hmm peek` of the workspace shows `text`. */
async function peekShows(name: string, text: string): Promise<void> {
  for (let waited = 0; !(await world.hmm(['peek', name])).stdout.includes(text); waited += 100) {
    if (waited > 30_000) throw new Error(`peek of ${name} never showed ${text}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

// Says it started, with colour, waits for the file "go" in its tree, then leaves work and ends.
const WAITS_FOR_GO = `echo started; printf '\\033[31mred\\033[0m\\n'; while [ ! -e go ]; do sleep 0.05; done; echo work > made.txt; echo finished`

describe('hmm run -d', () => {
  it('returns at once; the command runs, peek shows its output made printable, and its end is recorded', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'bg1', 'sh', '-c', WAITS_FOR_GO])
    expect(started.exitCode, started.stderr).toBe(0)
    const {tree} = workspaceLine(started.stderr)
    expect((await row('bg1')).state).toBe('running')
    await until('bg1', () => existsSync(join(tree, '..', '..', 'bg', 'output')))
    let peeked = await world.hmm(['peek', 'bg1'])
    for (let waited = 0; !peeked.stdout.includes('red'); waited += 100) {
      if (waited > 30_000) break
      await new Promise(resolve => setTimeout(resolve, 100))
      peeked = await world.hmm(['peek', 'bg1'])
    }
    expect(peeked.stdout).toBe('started\n^[[31mred^[[0m\n')
    writeFileSync(join(tree, 'go'), '')
    const ended = await until('bg1', now => now.state === 'done' && now.files !== null)
    expect(ended.files).toBe(2)
    expect((await world.hmm(['peek', '-n', '1', 'bg1'])).stdout).toBe('finished\n')
  })

  it('records the exit status of the command: hmm ls --json and -l show it once done', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'ex3', 'sh', '-c', 'while [ ! -e go ]; do sleep 0.05; done; exit 3'])
    expect(started.exitCode, started.stderr).toBe(0)
    const {id, tree} = workspaceLine(started.stderr)
    const running = await row('ex3')
    expect([running.state, running.exit, running.signal]).toEqual(['running', null, null])
    expect((await world.hmm(['ls', '-l'])).stdout).toMatch(new RegExp(`^${id} +ex3 +running .* - +~`, 'm'))
    writeFileSync(join(tree, 'go'), '')
    const ended = await until('ex3', now => now.state === 'done' && now.files !== null)
    expect([ended.exit, ended.signal]).toEqual([3, null])
    const long = (await world.hmm(['ls', '-l'])).stdout.split('\n')
    expect(long[0]).toMatch(/^ID +NAME +STATE +AGE +WORK +SIZE +EXIT +ORIGIN$/)
    expect(long.find(line => line.startsWith(id))).toMatch(/ 3 +~/)
    expect((await world.hmm(['ls'])).stdout).not.toContain('EXIT')
  })

  it('runs three at once, each in its own workspace with its own output', async () => {
    const names = ['m1', 'm2', 'm3']
    const trees: string[] = []
    for (const name of names) {
      const started = await world.hmm([
        'run',
        '-d',
        '-n',
        name,
        'sh',
        '-c',
        `echo "I am ${name}"; while [ ! -e go ]; do sleep 0.05; done; echo ${name} > made.txt; echo "${name} ends"`,
      ])
      expect(started.exitCode, started.stderr).toBe(0)
      trees.push(workspaceLine(started.stderr).tree)
    }
    expect(new Set(trees).size).toBe(3)
    for (const name of names) expect((await row(name)).state).toBe('running')
    for (const tree of trees) writeFileSync(join(tree, 'go'), '')
    for (const name of names) {
      const ended = await until(name, now => now.state === 'done' && now.files !== null)
      expect([ended.files, ended.exit]).toEqual([2, 0])
      expect((await world.hmm(['peek', name])).stdout).toBe(`I am ${name}\n${name} ends\n`)
    }
  })

  it('hmm stop ends a background run', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'bg2', 'sleep', '600'])
    expect(started.exitCode, started.stderr).toBe(0)
    const stopped = await world.hmm(['stop', 'bg2'])
    expect(stopped.stderr).toMatch(/^hmm: stopped workspace \w+ \(bg2\)\n$/)
    const ended = await until('bg2', now => now.state === 'done' && now.files !== null)
    expect([ended.exit, ended.signal]).toEqual([null, 15])
    expect((await world.hmm(['ls', '-l'])).stdout).toMatch(/ bg2 .* signal 15 +~/)
  })

  it('peek of a workspace not run in the background: one line', async () => {
    const ran = await world.hmm(['run', '-n', 'fg', 'true'])
    expect(ran.exitCode).toBe(0)
    const peeked = await world.hmm(['peek', 'fg'])
    expect(peeked.stderr).toMatch(/^hmm: workspace \w+ \(fg\) was not run in the background \(hmm run -d\)\n$/)
    expect(peeked.exitCode).toBe(1)
  })

  it('a command not found: peek says so as hmm run says it', async () => {
    const foreground = await world.hmm(['run', 'no-such-command-here'])
    expect(foreground.stderr).toContain('hmm: no-such-command-here: command not found\n')
    const started = await world.hmm(['run', '-d', '-n', 'nf', 'no-such-command-here'])
    expect(started.exitCode, started.stderr).toBe(0)
    const ended = await until('nf', now => now.state === 'done' && now.files !== null)
    expect(ended.exit).toBe(127)
    expect((await world.hmm(['peek', 'nf'])).stdout).toBe('hmm: no-such-command-here: command not found\n')
  })

  it('leaves NODE_EXTRA_CA_CERTS unread by the background hmm (bin/run.js), and gives it to the command', async () => {
    const certificates = join(world.root, 'no-such-bundle.pem')
    const started = await world.hmm(['run', '-d', '-n', 'certs', 'sh', '-c', 'printf %s "$NODE_EXTRA_CA_CERTS" > shown'], {
      env: {...world.env, NODE_EXTRA_CA_CERTS: certificates},
    })
    expect(started.exitCode, started.stderr).toBe(0)
    // Node's warning at its start, certificates it could not read: this hmm's (started as node bin/run.js), not a second.
    expect(started.stderr.split('Ignoring extra certs from')).toHaveLength(2)
    await until('certs', now => now.state === 'done' && now.files !== null)
    expect(readFileSync(join(workspaceLine(started.stderr).tree, 'shown'), 'utf8')).toBe(certificates)
  })

  it('exits 1, as hmm run does, when the background hmm fails before the command starts', async () => {
    const missing = join(world.root, 'no-such-place')
    for (let round = 0; round < 3; round++) {
      const result = await world.hmm(['run', '-d', '-w', missing, 'true'])
      expect(result, `round ${round}`).toMatchObject({exitCode: 1, stderr: `hmm: ${missing} does not exist\n`})
    }
  })
})

describe('hmm exec -d', () => {
  it('runs a command again in the background in an existing workspace; one background command there at a time', async () => {
    const made = await world.hmm(['run', '-n', 'ex1', 'true'])
    const {tree} = workspaceLine(made.stderr)
    const started = await world.hmm(['exec', '-d', 'ex1', 'sh', '-c', 'echo again; while [ ! -e go ]; do sleep 0.05; done; echo work > e.txt'])
    expect(started.exitCode, started.stderr).toBe(0)
    expect(workspaceLine(started.stderr).tree).toBe(tree)
    expect((await row('ex1')).state).toBe('running')
    await peekShows('ex1', 'again')
    const second = await world.hmm(['exec', '-d', 'ex1', 'true'])
    expect(second.stderr).toMatch(/^hmm: workspace \w+ \(ex1\) already runs a command in the background \(hmm attach ex1\)\n$/)
    expect(second.exitCode).toBe(1)
    writeFileSync(join(tree, 'go'), '')
    const ended = await until('ex1', now => now.state === 'done' && now.files === 2)
    expect([ended.files, ended.exit]).toEqual([2, 0])
    expect((await world.hmm(['peek', 'ex1'])).stdout).toBe('again\n')
  })
})

describe('the scrollback (bg/output)', () => {
  // Trimmed to its last MiB once it holds two; a read of the pty (64 KiB) and a little more of slack.
  const BOUND = 2 * 1024 * 1024 + 128 * 1024
  const outputOf = (tree: string) => join(tree, '..', '..', 'bg', 'output')

  /** The largest size the file had, looked at as often as the loop turns until `over` says so. */
  async function largestUntil(file: string, over: () => Promise<boolean>): Promise<number> {
    let largest = 0
    for (let waited = 0; ; waited++) {
      const ends = Date.now() + 100
      while (Date.now() < ends) largest = Math.max(largest, statSync(file, {throwIfNoEntry: false})?.size ?? 0)
      if (await over()) return largest
      if (waited > 600) throw new Error('the flood never ended')
      await new Promise(resolve => setImmediate(resolve))
    }
  }

  const FLOOD = 'yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

  it('stays bounded under writers faster than the keeper, with nobody attached', async () => {
    const started = await world.hmm([
      'run',
      '-d',
      '-n',
      'fl1',
      'sh',
      '-c',
      `while [ ! -e go ]; do sleep 0.05; done; for w in 1 2 3; do ${FLOOD} | head -c 4000000 & done; wait; echo; echo flood-over; sleep 600`,
    ])
    expect(started.exitCode, started.stderr).toBe(0)
    const {tree} = workspaceLine(started.stderr)
    writeFileSync(join(tree, 'go'), '')
    const largest = await largestUntil(outputOf(tree), async () => (await world.hmm(['peek', '-n', '1', 'fl1'])).stdout === 'flood-over\n')
    expect((await world.hmm(['stop', 'fl1'])).exitCode).toBe(0)
    expect(largest).toBeLessThan(BOUND)
  })

  it('stays bounded under a flood while a terminal is attached', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'fl2', 'sh', '-c', `read x; ${FLOOD} | head -c 8000000; echo; echo flood-over; sleep 600`])
    expect(started.exitCode, started.stderr).toBe(0)
    const {tree} = workspaceLine(started.stderr)
    let attachEnded = false
    const attached = onPty([{expect: 'detaches'}, {send: 'go\r'}, {expect: 'flood-over'}, {send: '\x1d'}, {expect: 'detached'}], ['attach', 'fl2']).finally(
      () => (attachEnded = true),
    )
    const largest = await largestUntil(outputOf(tree), async () => attachEnded)
    const result = await attached
    expect((await world.hmm(['stop', 'fl2'])).exitCode).toBe(0)
    expect(result.failed).toBeNull()
    expect(largest).toBeLessThan(BOUND)
  })
})

describe('STATE waiting', () => {
  // HMM_WAITING_AFTER_MS (read by hmm ls, for tests only): the silence after which a running background run waits; a minute otherwise.
  const soon = async () => JSON.parse((await world.hmm(['ls', '--json'], {env: {...world.env, HMM_WAITING_AFTER_MS: '1000'}})).stdout) as Row[]

  it('shows waiting for a background run that has written nothing for a while, and running again once it writes', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'w1', 'sh', '-c', 'echo "a question?"; read x; while [ ! -e go ]; do echo busy; sleep 0.05; done'])
    expect(started.exitCode, started.stderr).toBe(0)
    const {id} = workspaceLine(started.stderr)
    // A minute by default.
    expect((await row('w1')).state).toBe('running')
    for (let waited = 0; (await soon()).find(entry => entry.name === 'w1')!.state !== 'waiting'; waited += 100) {
      if (waited > 30_000) throw new Error('never waiting')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    const waiting = (await soon()).find(entry => entry.name === 'w1')!
    expect([waiting.files, waiting.exit]).toEqual([null, null])
    const listed = await world.hmm(['ls'], {env: {...world.env, HMM_WAITING_AFTER_MS: '1000'}})
    expect(listed.stdout).toMatch(new RegExp(`^${id} +w1 +waiting +\\d+s +\\? +~`, 'm'))
    // Answered: it writes without pause from then on.
    const answered = await onPty([{expect: 'detaches'}, {send: 'yes\r'}, {expect: 'busy'}, {send: '\x1d'}, {expect: 'detached'}], ['attach', 'w1'])
    expect(answered.failed, answered.transcript).toBeNull()
    expect((await soon()).find(entry => entry.name === 'w1')!.state).toBe('running')
    expect((await world.hmm(['stop', 'w1'])).exitCode).toBe(0)
  })

  it('only while it reads its terminal: programs waiting on stdin (read, epoll as node, poll, select) wait; sleep and a silent busy one do not', async () => {
    const node = process.execPath
    const runs: Array<[string, string[], string]> = [
      ['rn', [node, '-e', "process.stdin.setRawMode(true); process.stdin.on('data', () => process.exit(0)); console.log('asks')"], 'waiting'],
      ['rp', ['python3', '-c', "import select; p = select.poll(); p.register(0, select.POLLIN); print('asks', flush=True); p.poll()"], 'waiting'],
      ['rs', ['python3', '-c', "import select; print('asks', flush=True); select.select([0], [], [])"], 'waiting'],
      ['rr', ['sh', '-c', 'echo asks; read x'], 'waiting'],
      ['ns', ['sh', '-c', 'echo builds; sleep 600'], 'running'],
      ['nn', [node, '-e', "console.log('builds'); setInterval(() => {}, 1000)"], 'running'],
    ]
    for (const [name, command] of runs) expect((await world.hmm(['run', '-d', '-n', name, ...command])).exitCode).toBe(0)
    for (const [name] of runs) await peekShows(name, runs.find(run => run[0] === name)![2] === 'waiting' ? 'asks' : 'builds')
    // Those that read become waiting once silent long enough; the others were as long silent by then.
    const readers = runs.filter(run => run[2] === 'waiting').map(run => run[0])
    for (let waited = 0; ; waited += 100) {
      const now = await soon()
      if (readers.every(name => now.find(entry => entry.name === name)!.state === 'waiting')) break
      if (waited > 30_000) throw new Error(`never all waiting: ${JSON.stringify(now.map(entry => [entry.name, entry.state]))}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    const states = new Map((await soon()).map(entry => [entry.name, entry.state]))
    expect((await world.hmm(['stop', ...runs.map(run => run[0])])).exitCode).toBe(0)
    expect(runs.map(([name]) => [name, states.get(name)])).toEqual(runs.map(([name, , state]) => [name, state]))
  })
})

describe('hmm attach', () => {
  it('relays input and output on a terminal; Ctrl-] detaches and the command runs on; its end ends an attach', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'sh1', 'sh', '-c', 'echo ready; while read line; do echo "got:$line"; done; echo leaving'])
    expect(started.exitCode, started.stderr).toBe(0)
    const first = await onPty(
      [{expect: 'Ctrl-\\] detaches'}, {send: 'one\r'}, {expect: 'got:one'}, {send: '\x1d'}, {expect: 'detached from workspace'}],
      ['attach', 'sh1'],
    )
    expect(first.failed, first.transcript).toBeNull()
    expect(first.status).toBe(0)
    expect((await row('sh1')).state).toBe('running')

    const noTerminal = await world.hmm(['attach', 'sh1'])
    expect(noTerminal.stderr).toBe('hmm: hmm attach needs a terminal\n')
    expect(noTerminal.exitCode).toBe(1)

    const second = await onPty(
      [{expect: 'detaches'}, {send: 'two\r'}, {expect: 'got:two'}, {send: '\x04'}, {expect: 'the command ended \\(exit status 0\\)'}],
      ['attach', 'sh1'],
    )
    expect(second.failed, second.transcript).toBeNull()
    expect(second.status).toBe(0)
    await until('sh1', now => now.state === 'done' && now.files !== null)
    // The pty echoes what was typed, as a terminal does.
    expect((await world.hmm(['peek', 'sh1'])).stdout).toBe('ready\none\ngot:one\ntwo\ngot:two\nleaving\n')
  })

  it('replays the last of what the command wrote, a sequence cut at the start of the replay left out', async () => {
    // A title whose start lies before the replayed tail (its rest would show as text), then a line.
    const title = `printf '\\033]2;%s\\007\\n' "$(head -c 100000 /dev/zero | tr '\\0' T)"`
    const started = await world.hmm(['run', '-d', '-n', 'rp1', 'sh', '-c', `${title}; echo before-attach; read x; echo "got:$x"; sleep 600`])
    expect(started.exitCode, started.stderr).toBe(0)
    await peekShows('rp1', 'before-attach')
    const attached = await onPty(
      [{expect: 'detaches'}, {expect: 'before-attach'}, {send: 'yes\r'}, {expect: 'got:yes'}, {send: '\x1d'}, {expect: 'detached'}],
      ['attach', 'rp1'],
    )
    expect((await world.hmm(['stop', 'rp1'])).exitCode).toBe(0)
    expect(attached.failed, attached.transcript).toBeNull()
    expect(attached.transcript).not.toContain('TTTT')
  })

  it('Ctrl-] detaches from a command that never reads its terminal, after more input than it can take', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'nr', 'sh', '-c', 'stty raw -echo; echo never-reading; sleep 600'])
    expect(started.exitCode, started.stderr).toBe(0)
    await peekShows('nr', 'never-reading')
    // Typed once attached (the replay shown): before, the terminal is not yet raw and drops what its line cannot hold.
    const attached = await onPty(
      [{expect: 'detaches'}, {expect: 'never-reading'}, {send: 'x'.repeat(65536)}, {send: '\x1d'}, {expect: 'detached from workspace'}],
      ['attach', 'nr'],
    )
    const state = (await row('nr')).state
    expect((await world.hmm(['stop', 'nr'])).exitCode).toBe(0)
    expect(attached.failed, attached.transcript.slice(-300)).toBeNull()
    expect(state).toBe('running')
  })

  it('hmm stop gives an attached terminal back with one line', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'sh2', 'sh', '-c', 'read x; echo "got:$x"; sleep 600'])
    expect(started.exitCode, started.stderr).toBe(0)
    const attached = onPty([{expect: 'detaches'}, {send: 'in\r'}, {expect: 'got:in'}, {expect: 'the command ended \\(signal'}], ['attach', 'sh2'])
    // Attached once what was typed came back (a bound for hangs).
    for (let waited = 0; !(await world.hmm(['peek', 'sh2'])).stdout.includes('got:in'); waited += 100) {
      if (waited > 30_000) throw new Error('the attach never relayed')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    expect((await world.hmm(['stop', 'sh2'])).exitCode).toBe(0)
    const result = await attached
    expect(result.failed, result.transcript).toBeNull()
    expect(result.transcript).toMatch(/hmm: workspace \w+ \(sh2\): the command ended \(signal 15\)\r\n$/)
  })

  it('hmm rm -f gives an attached terminal back with one line and removes the workspace', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'sh4', 'sh', '-c', 'read x; echo "got:$x"; sleep 600'])
    expect(started.exitCode, started.stderr).toBe(0)
    const {id, tree} = workspaceLine(started.stderr)
    const attached = onPty([{expect: 'detaches'}, {send: 'in\r'}, {expect: 'got:in'}, {expect: 'the command ended \\(signal'}], ['attach', 'sh4'])
    for (let waited = 0; !(await world.hmm(['peek', 'sh4'])).stdout.includes('got:in'); waited += 100) {
      if (waited > 30_000) throw new Error('the attach never relayed')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    const removed = await world.hmm(['rm', '-f', 'sh4'])
    expect(removed.exitCode, removed.stderr).toBe(0)
    const result = await attached
    expect(result.failed, result.transcript).toBeNull()
    expect(result.status).toBe(0)
    expect(result.transcript).toMatch(/\r\nhmm: workspace \w+ \(sh4\): the command ended \(signal 15\)\r\n$/)
    expect(existsSync(tree)).toBe(false)
    expect((await world.hmm(['ls', '--json'])).stdout).not.toContain(id)
  })

  it('a second attach while one is attached is refused with one line', async () => {
    const started = await world.hmm(['run', '-d', '-n', 'sh3', 'sh', '-c', 'read x; echo "got:$x"; while [ ! -e go ]; do sleep 0.05; done; echo end'])
    expect(started.exitCode, started.stderr).toBe(0)
    const {tree} = workspaceLine(started.stderr)
    const first = onPty([{expect: 'detaches'}, {send: 'in\r'}, {expect: 'got:in'}, {expect: 'end'}, {expect: 'the command ended'}], ['attach', 'sh3'])
    for (let waited = 0; !(await world.hmm(['peek', 'sh3'])).stdout.includes('got:in'); waited += 100) {
      if (waited > 30_000) throw new Error('the attach never relayed')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    const second = await onPty([{expect: 'attached elsewhere'}], ['attach', 'sh3'])
    expect(second.transcript).toMatch(/hmm: workspace \w+ \(sh3\) is attached elsewhere \(one terminal at a time\)\r\n$/)
    expect(second.status).toBe(1)
    writeFileSync(join(tree, 'go'), '')
    const result = await first
    expect(result.failed, result.transcript).toBeNull()
  })
})
