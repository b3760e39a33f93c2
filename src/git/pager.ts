// Showing a diff on a terminal as the user's git would: their colours and
// their pager. Off a terminal (a pipe, a file) output is the raw bytes.
//
// Security: colour and pager settings are read from the origin's config,
// which is the user's own (global, system and the origin repository's),
// never from the workspace's `.git`; the pager is the user's program, run
// as git runs it (through the shell). NO_COLOR turns colour off.
import {spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import {configEntries, git} from './git.js'
import {programPath} from '../platform/programs.js'
import {patchColours, patchForTerminal} from '../ui/patch.js'

/** Where to ask git about the user's settings: the origin (its repository's config too) if it still exists. */
function askIn(origin: string): string {
  return existsSync(origin) ? origin : '/'
}

export function onTerminal(): boolean {
  return process.stdout.isTTY === true
}

/**
 * The user's `color.diff.*` settings as `-c` arguments if git would colour
 * a diff on this terminal; undefined for no colour.
 */
export async function colourSettings(origin: string): Promise<string[] | undefined> {
  if (!onTerminal() || (process.env.NO_COLOR ?? '') !== '') return undefined
  const cwd = askIn(origin)
  const wanted = await git(['config', '--get-colorbool', 'color.diff', 'true'], {cwd, okStatuses: [1, 128]})
  if (wanted.stdout.trim() !== 'true') return undefined
  const settings = await git(['config', '-z', '--get-regexp', '^color\\.diff\\.'], {cwd, okStatuses: [1, 128]})
  const entries = settings.exitCode === 0 ? configEntries(settings.stdout) : []
  return entries.flatMap(([key, value]) => (value === undefined ? [] : ['-c', `${key}=${value}`]))
}

/** pagerCommand's answers, by origin: asked once, perhaps ahead (askPagerSoon). */
const pagers = new Map<string, Promise<string | undefined>>()

/** The pager git would use for `git diff` in the origin, or undefined for none; asked once. */
function pagerCommand(origin: string): Promise<string | undefined> {
  let pager = pagers.get(origin)
  if (pager === undefined) pagers.set(origin, (pager = askPager(origin)))
  return pager
}

/** On a terminal, asks for the pager now, while the output is being made: show takes the answer. */
export function askPagerSoon(origin: string): void {
  if (onTerminal()) pagerCommand(origin).catch(() => {})
}

async function askPager(origin: string): Promise<string | undefined> {
  const cwd = askIn(origin)
  // $GIT_PAGER first, as git does (git.ts scrubs it from git's environment).
  let pager = process.env.GIT_PAGER
  if (pager === undefined) {
    const perCommand = await git(['config', '--get', 'pager.diff'], {cwd, okStatuses: [1, 128]})
    const setting = perCommand.exitCode === 0 ? perCommand.stdout.trim() : ''
    if (/^(false|no|off|0)$/i.test(setting)) return undefined
    if (setting !== '' && !/^(true|yes|on|1)$/i.test(setting)) pager = setting
  }
  pager ??= (await git(['var', 'GIT_PAGER'], {cwd, okStatuses: [128]})).stdout.replace(/\n$/, '')
  return pager === '' || pager === 'cat' ? undefined : pager
}

/** Writes to stdout; a reader that went away (`hmm diff | head`) ends the output quietly, as with git. */
function writeOut(bytes: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' ? resolve() : reject(error))
    process.stdout.once('error', onError)
    process.stdout.write(bytes, error => {
      process.stdout.off('error', onError)
      if (error) onError(error)
      else resolve()
    })
  })
}

/** Writes the bytes to stdout, through the user's pager on a terminal. */
export async function show(bytes: Buffer, origin: string): Promise<void> {
  const pager = onTerminal() && bytes.length > 0 ? await pagerCommand(origin) : undefined
  if (!pager) {
    await writeOut(bytes)
    return
  }
  // The environment git gives its pager: less and lv told to pass colours and quit on one screen.
  const env = {...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c'}
  const child = spawn(programPath('sh') ?? 'sh', ['-c', pager], {stdio: ['pipe', 'inherit', 'inherit'], env})
  child.stdin.on('error', () => {}) // the user quit the pager before the end: fine
  child.stdin.end(bytes)
  // As git does: Ctrl-C is the pager's to handle (less stays open), hmm waits for it.
  const ignore = () => {}
  process.on('SIGINT', ignore)
  const started = await new Promise<boolean>(resolve => {
    child.on('error', () => resolve(false))
    child.on('close', () => resolve(true))
  })
  process.off('SIGINT', ignore)
  if (!started) await writeOut(bytes)
}

/**
 * Shows a patch got from git without colour: on a terminal, its content made
 * unable to drive the terminal and coloured by hmm with the user's settings
 * (colourSettings) where given (ui/patch.ts).
 */
export async function showPatch(patch: Buffer, origin: string, colour: string[] | undefined): Promise<void> {
  await show(onTerminal() ? patchForTerminal(patch, colour && patchColours(colour.filter(arg => arg !== '-c'))) : patch, origin)
}
