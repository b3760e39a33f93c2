// The one way hmm runs git on its own behalf.
//
// Security: git only ever runs with the origin's repository (the user's
// own) or hmm's private git directory (config written by hmm) as its
// repository — never the workspace's `.git`, whose config and hooks belong
// to the sandboxed command (git/bundle.ts runs that one confined). The
// environment is scrubbed of everything that redirects git (GIT_DIR,
// GIT_INDEX_FILE, ...) so only what the caller passes applies. A git that
// reads a workspace's files runs confined (GitOptions.readsWorkspace).
import {debug, debugEnabled, HmmError} from '../ui/errors.js'
import {prepareConfined, runConfined, type Reader} from '../platform/confined.js'
import {deleteIfSame, heldOpen, type FileId} from '../platform/held-open.js'
import {runCollected} from '../platform/collected.js'
import {programPath} from '../platform/programs.js'

/**
 * Settings for every git hmm runs, and every git that git starts (they
 * travel in GIT_CONFIG_PARAMETERS, which git passes on to its children,
 * submodule ones included, and which outranks every config file): nothing
 * a repository's config names as a program runs (fsmonitor, hooks), git
 * does not look into nested repositories or fetch for them, keeps no cache
 * of the tree, and takes nothing from a local path unless hmm asks
 * (ALLOW_LOCAL_TRANSPORT). Filters, diff drivers and a nested repository's
 * own config cannot be switched off by name: those are kept out by never
 * entering a nested repository (changes.ts) and by hmm's private config.
 */
export const PROTECTIVE_SETTINGS: Record<string, string> = {
  'core.fsmonitor': 'false',
  'core.hooksPath': '/dev/null',
  'core.untrackedCache': 'false',
  'diff.ignoreSubmodules': 'all',
  'status.submoduleSummary': 'false',
  'submodule.recurse': 'false',
  'fetch.recurseSubmodules': 'false',
  'push.recurseSubmodules': 'no',
  'protocol.file.allow': 'never',
  'safe.bareRepository': 'explicit',
}

/** For the fetches and pushes hmm makes on purpose from a local path (a bundle, its private repository, a local remote). */
export const ALLOW_LOCAL_TRANSPORT = ['-c', 'protocol.file.allow=always']

/**
 * For git comparing two trees (never a work tree, where it would look into
 * nested repositories): every gitlink that changed is shown, whatever a
 * `.gitmodules` in the private index (the command's) says: its `ignore`
 * would hide one, its `update = !command` fail git (which refuses it).
 * Given, git reads no `.gitmodules` for the comparison.
 */
export const ALL_GITLINKS = ['--ignore-submodules=none']

/**
 * For patches whose bytes no configuration changes: no external diff or
 * textconv driver runs, and paths keep the a/ and b/ prefixes whatever
 * diff.noprefix or diff.mnemonicPrefix say.
 */
export const PLAIN_PATCH = ['--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/', ...ALL_GITLINKS]

const shellQuoted = (text: string) => `'${text.replace(/'/g, "'\\''")}'`

/**
 * For git run confined on what the workspace's command wrote (its
 * repository: git/bundle.ts), which needs no transport: none is allowed, so
 * the repository's config cannot make git fetch (a partial clone's lazy
 * fetch of a missing object runs its core.sshCommand or a remote helper).
 * Each transport git has by name too: a repository's protocol.<name>.allow
 * outranks protocol.allow, but not the same key given here. A remote helper
 * of another name runs only if the user installed it.
 */
const NO_TRANSPORT: Record<string, string> = {
  'protocol.allow': 'never',
  ...Object.fromEntries(['file', 'git', 'ssh', 'http', 'https', 'ftp', 'ftps', 'ext', 'fd'].map(name => [`protocol.${name}.allow`, 'never'])),
}

/** The protective settings (and `more`) as git reads them from its environment. */
export function protectiveEnv(more: Record<string, string> = {}): Record<string, string> {
  const parameters = Object.entries({...PROTECTIVE_SETTINGS, ...more}).map(([key, value]) => `${shellQuoted(key)}=${shellQuoted(value)}`)
  return {GIT_CONFIG_PARAMETERS: parameters.join(' ')}
}

/**
 * The whole environment of a git hmm runs confined (platform/confined.ts),
 * `extra` added: only what git needs to run, since hmm's own could hold
 * tokens; no system or global config, no prompt, no optional locks, no
 * transport (NO_TRANSPORT; and no lazy fetch, by name, for git 2.45 and
 * later).
 */
export function confinedEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const key of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ']) {
    const value = process.env[key]
    if (value !== undefined) env[key] = value
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    ...extra,
    ...protectiveEnv(NO_TRANSPORT),
  }
}

/** Environment variables git may keep: identity, credentials and transport for pushes. */
const KEPT_GIT_VARIABLES = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_(SSH|SSH_COMMAND|SSH_VARIANT|ASKPASS|TERMINAL_PROMPT|HTTP_.*|SSL_.*)$/

export function scrubbedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    if (key.startsWith('GIT_') && !KEPT_GIT_VARIABLES.test(key)) continue
    env[key] = value
  }
  return {...env, ...protectiveEnv(), ...extra}
}

export interface GitOptions {
  cwd: string
  env?: Record<string, string>
  input?: string | Buffer
  /** Exit statuses that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okStatuses?: number[]
  /**
   * The files git reads are a workspace's, which its command controls: git
   * runs confined, reading only what that command may read (a link or a
   * race swapped in cannot make it read a secret), and is stopped, and this
   * fails, if a FIFO there keeps it waiting (platform/fifo-watch.ts).
   */
  readsWorkspace?: {label: string; reader: Reader}
}

export interface GitResult {
  stdout: string
  stderr: string
  exitCode: number
}

export interface GitBytesResult {
  stdout: Buffer
  stderr: string
  exitCode: number
}

/** The subcommand's name, skipping `-c key=value` and other leading options. */
export function subcommand(args: string[]): string {
  for (let index = 0; index < args.length; index++) {
    if (args[index] === '-c' || args[index] === '-C') index++
    else if (!args[index].startsWith('-')) return args[index]
  }
  return ''
}

type Confined = GitOptions & {readsWorkspace: {label: string; reader: Reader}}

/** A shell script of git's steps (platform/confined.ts): `$1` is git's path, the arguments follow. */
interface Script {
  name: string
  text: string
}

/** What runs confined for git (or a script of git's steps) and where. */
function confinedStart(args: string[], options: Confined, script?: Script): {reader: Reader; cwd: string; command: string[]; env: Record<string, string>} {
  const git = programPath('git') ?? 'git'
  return {
    reader: options.readsWorkspace.reader,
    cwd: options.cwd,
    command: script ? [programPath('sh') ?? 'sh', '-c', script.text, 'sh', git, ...args] : [git, ...args],
    env: confinedEnv(options.env ?? {}),
  }
}

/** git run confined (GitOptions.readsWorkspace), as it would run outside; or a script of git's steps, in one sandbox. */
async function confinedGit(args: string[], options: Confined, script?: Script): Promise<GitBytesResult> {
  // Its stdin is closed: it may not wait on anything of hmm's.
  if (options.input !== undefined) throw new Error('git reading a workspace takes no input')
  const lock = options.env?.GIT_INDEX_FILE && `${options.env.GIT_INDEX_FILE}.lock`
  let heldLock: FileId | undefined
  const result = await runConfined({
    ...confinedStart(args, options, script),
    readsPipes: false,
    // The shell only waits for its children: theirs are the waits that count.
    shells: script ? 1 : 0,
    // The index's lock, if this git took it: only that one is stale once it is stopped.
    onStuck: pid => {
      if (lock) heldLock = heldOpen(pid, lock)
    },
  })
  if (result.stuckOnFifo) {
    // Killed while it held the index's lock (it was reading the files to update the index): that lock is stale.
    if (lock) deleteIfSame(lock, heldLock)
    throw new HmmError(
      `could not read the files of workspace ${options.readsWorkspace.label}: git was left waiting on a FIFO in it (a named pipe where git reads a file, such as a nested repository's HEAD)`,
    )
  }
  const {outcome} = result
  if (outcome.kind === 'setup-failed') throw new HmmError(`the sandbox could not be set up: ${outcome.reason}`)
  if (outcome.kind === 'not-started') throw new HmmError(`git could not be started in the sandbox: ${outcome.reason}`)
  if (outcome.kind === 'signalled') throw new HmmError(`git ${script?.name ?? subcommand(args)} was killed by ${outcome.signal}`)
  return {stdout: result.stdout, stderr: result.stderr, exitCode: outcome.status}
}

/** The result, timed under HMM_DEBUG; a failure not among okStatuses is an HmmError. */
function checked(name: string, started: number, result: GitBytesResult, options: GitOptions): GitBytesResult {
  if (debugEnabled()) debug(`git ${name}: ${Math.round(performance.now() - started)} ms`)
  if (result.exitCode !== 0 && !(options.okStatuses ?? []).includes(result.exitCode)) {
    const reason = result.stderr.trim().split('\n').at(-1) || `exit status ${result.exitCode}`
    throw new HmmError(`git ${name} failed: ${reason}`)
  }
  return result
}

/** git whose output is bytes: patches (binary files byte for byte) and anything passed on unchanged. */
export async function gitBytes(args: string[], options: GitOptions): Promise<GitBytesResult> {
  const started = debugEnabled() ? performance.now() : 0
  const result = options.readsWorkspace ? await confinedGit(args, {...options, readsWorkspace: options.readsWorkspace}) : await unconfinedGit(args, options)
  return checked(subcommand(args), started, result, options)
}

/**
 * Steps of git reading a workspace, as one shell script in one sandbox:
 * each confined start costs the helper's set-up (namespaces, Landlock).
 * `text` runs as `sh -c`, with git's path as `$1` and `args` after it.
 */
export async function gitScript(name: string, text: string, args: string[], options: Confined): Promise<GitResult> {
  const started = debugEnabled() ? performance.now() : 0
  const result = checked(name, started, await confinedGit(args, options, {name, text}), options)
  return {...result, stdout: result.stdout.toString('utf8')}
}

/**
 * Starts the sandbox of a gitScript hmm is about to run, ahead, so its
 * set-up overlaps hmm's work meanwhile (platform/confined.ts
 * prepareConfined): the gitScript with the same name, text, arguments and
 * options then uses it.
 */
export function prepareGitScript(text: string, args: string[], options: Confined): void {
  prepareConfined(confinedStart(args, options, {name: '', text}))
}

/** git run as hmm itself, on the user's or hmm's own repositories; its stdin is /dev/null unless it is given input. */
async function unconfinedGit(args: string[], options: GitOptions): Promise<GitBytesResult> {
  const ran = await runCollected(programPath('git') ?? 'git', args, {cwd: options.cwd, env: scrubbedEnv(options.env), input: options.input}).catch(
    (error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new HmmError('git is not installed (hmm needs git on PATH)') : error
    },
  )
  return {stdout: ran.stdout, stderr: ran.stderr, exitCode: ran.exitCode ?? 1}
}

export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  const result = await gitBytes(args, options)
  return {...result, stdout: result.stdout.toString('utf8')}
}

/** git's message lines, without its `error: `, `fatal: ` and `hint: ` prefixes; blank lines left out. */
export function gitMessages(text: string): string[] {
  return text
    .split('\n')
    .map(line => line.replace(/^(error|fatal|hint): /, '').trim())
    .filter(line => line !== '')
}

/** What bytes that are not UTF-8 read as in git's output, which git() decodes as UTF-8: names alike that git keeps apart. */
export const NOT_UTF8 = '\uFFFD'

/** What git said last (why it failed), or `fallback` when it said nothing. */
export function gitReason(text: string, fallback = 'unknown error'): string {
  return gitMessages(text).at(-1) ?? fallback
}

/** The pairs of -z output whose records are two NUL-terminated fields (`--raw` and its path, `%s%x00%b`). */
export function nulPairs(text: string): Array<[string, string]> {
  const fields = text.split('\0')
  const pairs: Array<[string, string]> = []
  for (let index = 0; index + 1 < fields.length; index += 2) pairs.push([fields[index], fields[index + 1]])
  return pairs
}

/** The entries of `git config -z` (--list, --get-regexp): a key, then a newline and its value unless it has none. */
export function configEntries(listed: string): Array<[string, string | undefined]> {
  return listed
    .split('\0')
    .filter(entry => entry !== '')
    .map(entry => {
      const newline = entry.indexOf('\n')
      return newline < 0 ? [entry, undefined] : [entry.slice(0, newline), entry.slice(newline + 1)]
    })
}

/** The branch a full ref name names: none but under refs/heads/ (a detached HEAD names "HEAD"). */
export const branchOf = (ref: string | undefined): string | null => (ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null)

/** stdout without its final newline. */
export async function gitLine(args: string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.replace(/\n$/, '')
}
