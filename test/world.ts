// A world of its own for each black-box test: its own HOME (outside /tmp,
// which the sandboxed command may write), git configured by the world only,
// GIT_*/XDG_*/HMM_* scrubbed. Kept on failure for a look, removed otherwise.
import {execa, execaSync, type Options, type Result, type ResultPromise} from 'execa'
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {onTestFailed, onTestFinished} from 'vitest'

export const PROJECT = fileURLToPath(new URL('..', import.meta.url))
export const BIN = join(PROJECT, 'bin', 'run.js')
export const HELPER = join(PROJECT, 'native-helpers', 'build', 'hmm-helper')

/**
 * A directory above the checkout that other users may not search (a 0700
 * home), if there is one: tests that need the worlds reachable by other
 * ids (root's command runs as ids that own no file) say they are skipped.
 */
export const CLOSED_TO_OTHERS = ((): string | undefined => {
  for (let dir = dirname(PROJECT); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir
    if (dir === '/') return undefined
  }
})()

/**
 * Why hmm's readers take their slower way here, if they do: run as root
 * from a checkout beneath a directory only root may search, outside the
 * worlds' homes, they (as root's command: ids that own no file) cannot run
 * its helper, and git's steps go in three sandboxes rather than one. Tests
 * that count those sandboxes say they are skipped.
 */
export const READERS_SLOWER =
  CLOSED_TO_OTHERS && process.getuid?.() === 0 ? `hmm's helper lies beneath ${CLOSED_TO_OTHERS}, which only root may search` : undefined

/**
 * Where the worlds live: the checkout's .test-worlds, but for root in a
 * checkout that other users may not reach (cloned in /root): root's
 * command runs as ids that own no file, so worlds beneath a directory
 * only root may search would have hmm fall back to mapping it 0 to 0 (and
 * warn). There they live in /var/tmp (outside /tmp, which the command
 * may write), a directory of the checkout's own.
 */
export const WORLDS =
  CLOSED_TO_OTHERS && process.getuid?.() === 0
    ? join('/var/tmp', `hmm-test-worlds-${createHash('sha256').update(PROJECT).digest('hex').slice(0, 12)}`)
    : join(PROJECT, '.test-worlds')

/**
 * Whether the worlds lie where macOS keeps its paths under /private (/var,
 * /tmp, /etc): `hmm sandbox --platform darwin` names the worlds' paths as
 * macOS would, which do not exist on this Linux machine, so what it checks
 * on disk there (links on the way) cannot be checked here.
 */
export const MOVED_ON_MACOS = /^\/(var|tmp|etc)(\/|$)/.test(WORLDS)

/**
 * Words for a shell script, each quoted as the shell needs it: a checkout may
 * lie under "My Projects", and a word split at its space names another file.
 * Plain words stay as they are, as hmm prints them.
 */
export const shellQuote = (...words: string[]): string =>
  words.map(word => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)).join(' ')

/** The command line that runs this checkout's hmm with these arguments, for a script that runs it itself. */
export const hmmCommand = (...args: string[]): string => shellQuote(process.execPath, BIN, ...args)

/** A path of this machine as `hmm sandbox --platform darwin` names it (macOS's /var is /private/var). */
export const asOnMacOS = (path: string): string => (/^\/(var|tmp|etc)(\/|$)/.test(path) ? `/private${path}` : path)

function cleanEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(GIT_|XDG_|HMM_|VITEST|NODE_OPTIONS|NODE_ENV|npm_)/i.test(key)) continue
    env[key] = value
  }
  return {...env, HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1', TMPDIR: '/tmp', SHELL: '/bin/sh'}
}

/** A directory of its own for the running test, under the checkout's .test-worlds, removed when the test ends. */
export function scratchDir(prefix: string): string {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', `${prefix}-`))
  onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
  return dir
}

/**
 * Gives the owner back every directory of a world (tests make 0555
 * directories, the kernel makes overlay work directories 0000), so that the
 * world can be removed, by the test or later by hand with `rm -rf`, by a
 * plain user too. Links are not followed.
 */
export function makeRemovable(root: string): void {
  const walk = (path: string) => {
    const stat = lstatSync(path, {throwIfNoEntry: false})
    if (!stat?.isDirectory()) return
    if ((stat.mode & 0o700) !== 0o700) chmodSync(path, (stat.mode & 0o7777) | 0o700)
    for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(root)
}

/** Removes a world, read-only directories and all. */
export function removeWorld(root: string): void {
  makeRemovable(root)
  rmSync(root, {recursive: true, force: true})
}

/** execa's options for a run of hmm; cwd only as a path (the world's directories are strings). */
export type HmmOptions = Options & {cwd?: string}

export interface HmmResult {
  exitCode: number
  stdout: string
  stderr: string
}

export class World {
  readonly root: string
  readonly home: string
  readonly origin: string
  readonly env: Record<string, string>
  /** What start() started: stopped, if still running, when the world is disposed of. */
  private readonly started: Started[] = []

  constructor(name = 'world') {
    mkdirSync(WORLDS, {recursive: true})
    this.root = mkdtempSync(join(WORLDS, `${name.replace(/[^\w-]/g, '-').slice(0, 40)}-`))
    // As a home's parent is (/home, /): run as root, the command, not root of the host, passes it.
    chmodSync(this.root, 0o755)
    this.home = join(this.root, 'home')
    this.origin = join(this.home, 'src', 'proj')
    mkdirSync(this.origin, {recursive: true})
    // Git, and hmm, look for a repository no higher than the world: the checkout holding it is one.
    this.env = {...cleanEnv(this.home), GIT_CEILING_DIRECTORIES: this.root}
    writeFileSync(join(this.home, '.gitconfig'), '[user]\n\tname = World\n\temail = world@example.com\n[init]\n\tdefaultBranch = main\n')
    // Inside a test: kept if it fails. Shared by a file (made in beforeAll): the file calls keepOnFailure.
    try {
      onTestFailed(() => this.keepOnFailure())
    } catch {}
  }

  private keep = false

  keepOnFailure(): void {
    if (!this.keep) console.error(`world kept: ${this.root}`)
    this.keep = true
  }

  dispose(): void {
    // Before the world goes: `hmm stop` needs its data directory.
    for (const started of this.started.splice(0)) started.stop()
    if (this.keep) makeRemovable(this.root)
    else removeWorld(this.root)
  }

  /** Secrets the sandboxed command must not read. */
  plantSecrets(): Record<string, string> {
    const secrets = {
      '.ssh/id_rsa': 'PRIVATE KEY',
      '.aws/credentials': 'aws secret',
      '.gnupg/private.key': 'gpg secret',
      '.config/gh/hosts.yml': 'gh token',
    }
    for (const [rel, content] of Object.entries(secrets)) this.write(join(this.home, rel), content)
    return Object.fromEntries(Object.entries(secrets).map(([rel, content]) => [join(this.home, rel), content]))
  }

  write(path: string, content: string | Buffer): string {
    mkdirSync(join(path, '..'), {recursive: true})
    writeFileSync(path, content)
    return path
  }

  /** Writes a file relative to the origin. */
  file(rel: string, content: string | Buffer): string {
    return this.write(join(this.origin, rel), content)
  }

  get dataDir(): string {
    return join(this.home, '.local', 'share', 'hmm')
  }

  async hmm(args: string[], options: HmmOptions = {}): Promise<HmmResult> {
    const result = (await execa(process.execPath, [BIN, ...args], {
      cwd: this.origin,
      env: this.env,
      extendEnv: false,
      reject: false,
      ...(options.input === undefined ? {stdin: 'ignore' as const} : {}),
      stripFinalNewline: false,
      ...options,
    })) as Result
    return {exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr)}
  }

  /**
   * Starts hmm for a command that keeps running; wait for what it prints with
   * Started.line. In a process group of its own, so that what is left of it
   * when the test ends (the command too) can be ended.
   */
  start(args: string[], options: {cwd?: string} = {}): Started {
    const child = execa(process.execPath, [BIN, ...args], {
      cwd: this.origin,
      env: this.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      detached: true,
      ...options,
    })
    const started = new Started(child, args, this.env)
    this.started.push(started)
    return started
  }

  async sh(script: string, cwd = this.origin): Promise<string> {
    const result = await execa('sh', ['-c', script], {cwd, env: this.env, extendEnv: false})
    return String(result.stdout)
  }

  async git(args: string[], cwd = this.origin): Promise<string> {
    const result = await execa('git', args, {cwd, env: this.env, extendEnv: false})
    return String(result.stdout)
  }

  /** A repository with one commit, an uncommitted change, an untracked and an ignored file. */
  async gitRepo(): Promise<void> {
    await this.git(['init', '-q'])
    this.file('README.md', 'hello\n')
    this.file('src/main.c', 'int main(void) { return 0; }\n')
    this.file('.gitignore', 'build/\n')
    await this.git(['add', '-A'])
    await this.git(['commit', '-qm', 'first'])
    this.file('README.md', 'hello\nuncommitted\n')
    this.file('notes.txt', 'untracked\n')
    this.file('build/out.o', 'ignored build output\n')
  }
}

/** Waits for a file that something else (a terminal's program, a command) writes when done, and reads it; a bound for hangs, not a measure. */
export async function whenWritten(path: string, timeout = 60_000): Promise<string> {
  for (let waited = 0; !existsSync(path); waited += 50) {
    if (waited > timeout) throw new Error(`${path} was never written`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return readFileSync(path, 'utf8')
}

/** How long Started.line waits, far below the test's own timeout. */
const LINE_TIMEOUT = 30_000

/** A hmm that keeps running (see World.start), and what it said so far. */
export class Started {
  stdout = ''
  stderr = ''
  private ended = false

  constructor(
    readonly child: ResultPromise,
    private readonly args: string[],
    /** The environment hmm ran in: stop() ends its workspace's command with `hmm stop` there. */
    private readonly env?: Record<string, string>,
  ) {
    child.stdout!.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    child.stdout!.once('end', () => (this.ended = true))
    // A test that fails half-way leaves nothing running behind it.
    try {
      onTestFinished(() => this.stop())
    } catch {}
  }

  /**
   * Kills hmm, if it still runs, and everything in its process group, then
   * ends its workspace's command, which the sandbox keeps in a group of
   * its own (and hmm's end does not end).
   */
  stop(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    try {
      process.kill(-this.child.pid!, 'SIGKILL')
    } catch {}
    const id = /^hmm: workspace ([0-9a-z]{6}):/m.exec(this.stderr)?.[1]
    if (id && this.env) execaSync(process.execPath, [BIN, 'stop', id], {env: this.env, extendEnv: false, reject: false})
  }

  /**
   * Waits until stdout holds this whole line. Fails at once, with what hmm
   * said, when its output ends without it (hmm failed); when the line does
   * not come in time, stops hmm and fails, rather than stall the test.
   */
  line(text: string, timeout = LINE_TIMEOUT): Promise<void> {
    const seen = () => this.stdout.split('\n').slice(0, -1).includes(text)
    const stdout = this.child.stdout!
    return new Promise((resolve, reject) => {
      const settle = (why?: string) => {
        clearTimeout(timer)
        stdout.off('data', check)
        stdout.off('end', ended)
        if (why === undefined) return resolve()
        const said = `stdout: ${JSON.stringify(this.stdout)}, stderr: ${JSON.stringify(this.stderr)}`
        reject(new Error(`hmm ${this.args.join(' ')}: no line "${text}" (${why}); ${said}`))
      }
      const check = () => seen() && settle()
      const ended = () => (seen() ? settle() : settle('its output ended'))
      const timer = setTimeout(() => {
        this.stop()
        settle(`not within ${timeout / 1000} s; killed it`)
      }, timeout)
      stdout.on('data', check)
      stdout.once('end', ended)
      if (this.ended) ended()
      else check()
    })
  }

  /** Waits for hmm to exit and its output to close. */
  async result(): Promise<HmmResult> {
    const result = (await this.child) as Result
    return {exitCode: result.exitCode ?? -1, stdout: this.stdout, stderr: this.stderr}
  }
}

/** The tasks of user `uid` now, as the kernel counts them for RLIMIT_NPROC (threads included). */
export function userTasks(uid: number): number {
  let n = 0
  for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name)))
    try {
      const st = statSync(`/proc/${pid}/task`)
      if (st.uid === uid) n += st.nlink - 2
    } catch {
      // ended meanwhile
    }
  return n
}

/** The workspace line `hmm run` prints: label and tree. */
export function workspaceLine(stderr: string): {id: string; name?: string; tree: string} {
  const match = /^hmm: workspace ([0-9a-z]{6})(?: \(([^)]+)\))?: (.+)$/m.exec(stderr)
  if (!match) throw new Error(`no workspace line in: ${stderr}`)
  return {id: match[1], name: match[2], tree: match[3]}
}
