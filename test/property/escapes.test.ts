// Property test: nothing the command writes reaches the user's terminal as
// an escape. Workspaces of an origin whose own directory name is hostile get
// hostile file names, commit subjects and bodies, and link targets — C0
// controls (ESC, BEL, CR, newline, tab), C1 controls (U+009B, a CSI alone),
// OSC 52 (clipboard write), OSC 0 (title), CSI 2J (erase), bidirectional
// controls (U+202E, U+2066-2069), zero-width characters — and every command
// that names paths, subjects or git's lines about them runs on them: diff,
// diff --stat, log, log -p, apply (--check, a conflict, --3way with a
// conflict, --3way beyond a symbolic link of the origin), merge (and its
// conflict), pr (a local bare remote: only the push), ls (-l, --json), rm.
// Each output, stdout and stderr, holds no C0 control but newline, no DEL,
// no C1 control, no format character (bidi, zero-width) nor line separator.
//
// A patch off a terminal is the exact bytes (`hmm diff > x.patch` applies
// with git), so only its frame is checked there (headers, where git quotes
// names; hmm's commit lines); on a terminal (a pty) the whole of it is, tabs
// of the content allowed.
//
// HMM_PROPERTY_RUNS (default 2) sets how many cases, HMM_PROPERTY_SEED the
// seed; a failure prints the seed and path, which HMM_PROPERTY_SEED and
// HMM_PROPERTY_PATH replay.
import {execa} from 'execa'
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, PROJECT, World} from '../world.js'
import {printable} from '../../src/ui/format.js'

const RUNS = Number(process.env.HMM_PROPERTY_RUNS ?? 2)
const SEED = Number(process.env.HMM_PROPERTY_SEED ?? 20261223)
const PATH = process.env.HMM_PROPERTY_PATH

const HOSTILE = [
  '\x1b]52;c;SGVsbG8=\x07', // OSC 52: write the clipboard
  '\x1b]0;TITLE\x07', // OSC 0: the window's title
  '\x1b[2J', // CSI: erase the screen
  '\x1b',
  '\x07',
  '\r',
  '\n',
  '\t',
  '\x01',
  '\x7f',
  '\u009b31m', // C1 CSI
  '\u0085',
  '\u202e', // right-to-left override
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200b', // zero-width space
  '\u200d',
  '\ufeff',
  '\u2028',
]
const PLAIN = ['a', 'Z', '9', ' ', '.', 'é', '日', '~', '"', "'"]
/** A name (no `/`, no NUL) that holds at least one hostile piece. */
const hostile = fc
  .tuple(
    fc.array(fc.constantFrom(...PLAIN, ...HOSTILE), {maxLength: 6}),
    fc.constantFrom(...HOSTILE),
    fc.array(fc.constantFrom(...PLAIN, ...HOSTILE), {maxLength: 6}),
  )
  .map(([before, one, after]) => [...before, one, ...after].join(''))
// The origin is the user's own directory: hmm does not take one whose path holds a newline for a repository's.
const scenario = fc.record({origin: hostile.map(name => name.replace(/\n/g, '')), name: hostile, subject: hostile, body: hostile, target: hostile})
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

/** What may not reach a terminal: C0 but newline (and tab where allowed), DEL, C1, format characters, line separators. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u
const ACTING_NOT_TAB = new RegExp(ACTING.source.replace('\\u0000-\\u0008', '\\u0000-\\u0009'), 'u')

/** The characters that would act, each with where it is, for a failure that says what and where. */
function acting(text: string, tabs: boolean): string[] {
  const pattern = new RegExp((tabs ? ACTING : ACTING_NOT_TAB).source, 'gu')
  return [...text.matchAll(pattern)].map(
    match => `U+${match[0].codePointAt(0)!.toString(16).padStart(4, '0')} in ${JSON.stringify(text.slice(Math.max(0, match.index - 20), match.index + 20))}`,
  )
}

/** A patch (or hmm log -p) as written off a terminal without its hunks' content lines, which are the file's bytes. */
function patchFrame(patch: string): string {
  let inHunk = false
  return patch
    .split('\n')
    .filter(line => {
      if (line.startsWith('@@')) inHunk = true
      else if (inHunk && /^[ +\-\\]/.test(line)) return false
      else inHunk = false
      return true
    })
    .join('\n')
}

let world: World
let cases = 0

async function run(cwd: string, args: string[]): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd,
    env: world.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    encoding: 'buffer',
    stripFinalNewline: false,
  })
  const decode = (bytes: unknown) => new TextDecoder('utf-8').decode(bytes as Uint8Array)
  return {exitCode: result.exitCode ?? -1, stdout: decode(result.stdout), stderr: decode(result.stderr)}
}

/** hmm on a terminal (test/pty-driver.py), no pager: what the terminal was sent, its \r\n made \n. */
async function onTerminal(cwd: string, args: string[]): Promise<string> {
  const result = await execa('python3', [join(PROJECT, 'test', 'pty-driver.py'), '[]', process.execPath, BIN, ...args], {
    cwd,
    env: {...world.env, GIT_PAGER: 'cat'},
    extendEnv: false,
  })
  const {status, transcript} = JSON.parse(result.stdout) as {status: number; transcript: string}
  expect(status, transcript).toBe(0)
  return transcript.replace(/\r\n/g, '\n')
}

async function checkScenario(s: Scenario): Promise<void> {
  const git = async (args: string[], cwd: string) => String((await execa('git', args, {cwd, env: world.env, extendEnv: false})).stdout)
  const hmm = async (args: string[], expected: number) => {
    const result = await run(origin, args)
    const patch = args[0] === 'diff' || (args[0] === 'log' && args.includes('-p'))
    // git ends a ---/+++ line whose quoted name holds a space with a tab.
    expect(acting(patch ? patchFrame(result.stdout) : result.stdout, patch), `hmm ${args.join(' ')}: stdout`).toEqual([])
    expect(acting(result.stderr, false), `hmm ${args.join(' ')}: stderr`).toEqual([])
    expect(result.exitCode, `hmm ${args.join(' ')}: ${result.stderr}`).toBe(expected)
    return result
  }

  const base = join(world.root, `case-${++cases}`)
  const origin = join(base, `o${s.origin}`)
  mkdirSync(origin, {recursive: true})
  const conflicted = `f${s.name}`
  await git(['init', '-q'], origin)
  writeFileSync(join(origin, conflicted), 'origin\n')
  writeFileSync(join(origin, '.gitignore'), 'data\n')
  await git(['add', '-A'], origin)
  await git(['commit', '-qm', 'first'], origin)
  mkdirSync(join(base, 'outside'))
  symlinkSync(join(base, 'outside'), join(origin, 'data'))
  await git(['init', '-q', '--bare', join(base, 'remote.git')], origin)
  await git(['remote', 'add', 'origin', join(base, 'remote.git')], origin)
  await git(['push', '-q', '-u', 'origin', 'main'], origin)

  // a: a commit (hostile name, subject and body), an uncommitted file and a link; b: a change to what the origin
  // then changes too; c: a file beyond the origin's symbolic link `data`.
  const scripts: Array<[string, string]> = [
    ['a', 'printf "new\\n" > "n$1" && git add -- "n$1" && git commit -qm "s$2" -m "$3" && printf "u\\n" > "u$1" && ln -s "t$4" "l$1"'],
    ['b', 'printf "from b\\n" > "f$1" && git commit -qam "b$2"'],
    ['c', 'rm data && mkdir data && printf evil > "data/d$1" && : > .gitignore'],
  ]
  for (const [name, script] of scripts) await hmm(['run', '-n', name, 'sh', '-c', script, 'sh', s.name, s.subject, s.body, s.target], 0)
  writeFileSync(join(origin, conflicted), 'changed in the origin\n')
  await git(['commit', '-qam', 'origin'], origin)

  await hmm(['ls'], 0)
  await hmm(['ls', '-l'], 0)
  const listed = await hmm(['ls', '--json'], 0)
  // Escaped, not changed: the JSON reads back the very paths.
  expect((JSON.parse(listed.stdout) as Array<{origin: string}>).map(ws => ws.origin)).toEqual([origin, origin, origin])

  await hmm(['log', 'a'], 0)
  await hmm(['log', '-p', 'a'], 0)
  await hmm(['diff', 'a'], 0)
  await hmm(['diff', '--stat', 'a'], 0)
  expect(acting(await onTerminal(origin, ['diff', 'a']), true), 'hmm diff a on a terminal').toEqual([])
  expect(acting(await onTerminal(origin, ['log', '-p', 'a']), true), 'hmm log -p a on a terminal').toEqual([])
  await hmm(['apply', '--check', 'a'], 0)
  await hmm(['pr', 'a'], 0)
  await hmm(['merge', 'a'], 0)
  await hmm(['apply', 'a'], 0)

  // git's own lines name the conflicted file.
  const failed = await hmm(['apply', 'b'], 1)
  expect(failed.stderr).toContain(printable(conflicted))
  await hmm(['apply', '--3way', 'b'], 1)
  await git(['checkout', '--', conflicted], origin)
  await hmm(['merge', 'b'], 1)
  await git(['merge', '--abort'], origin)

  await hmm(['apply', '--check', 'c'], 1)
  const beyond = await hmm(['apply', '--3way', 'c'], 1)
  expect(beyond.stderr).toContain(`hmm: affected file '${printable(`data/d${s.name}`)}' is beyond a symbolic link\n`)

  await hmm(['rm', 'b'], 1)
  await hmm(['rm', '-f', 'a', 'b', 'c'], 0)
}

describe('hostile names, subjects and link targets', () => {
  beforeAll(() => {
    world = new World('escapes-property')
  })
  afterAll(() => world?.dispose())

  it(
    `reach the terminal only as printable text, from every command that names them (${RUNS} cases, seed ${SEED})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async s => {
          try {
            await checkScenario(s)
          } catch (error) {
            world.keepOnFailure()
            throw error
          }
        }),
        {numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: process.env.HMM_PROPERTY_SHRINK !== '1', verbose: 1},
      )
    },
    RUNS * 120_000,
  )
})
