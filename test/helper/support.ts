// What the helper's tests share: the built binary (test/global-setup.ts builds it),
// worlds to run in, and a way to run the helper and see all it said.
//
// Worlds live under <repo>/.test-worlds/ (world.ts WORLDS), not /tmp: the sandboxed command may
// write /tmp, so a test proving "cannot write X" keeps X outside it. A world
// is removed when its test passes and kept, for a look, when it fails (its
// directories made writable by their owner, so that rm -rf removes it).

import {spawn, spawnSync, type StdioOptions} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdirSync, realpathSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {onTestFinished} from 'vitest'
import {makeRemovable, removeWorld, WORLDS} from '../world.js'

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const helper = join(repo, 'native-helpers', 'build', 'hmm-helper')

/** A fresh directory for one test, canonical (the helper compares paths as
 * bytes), removed if the test passes. */
export function world(name: string): string {
  const base = WORLDS
  mkdirSync(base, {recursive: true})
  const dir = join(realpathSync(base), `${name}-${randomBytes(4).toString('hex')}`)
  mkdirSync(dir)
  onTestFinished(ctx => {
    if (ctx.task.result?.state === 'pass') return removeWorld(dir)
    makeRemovable(dir)
    process.stderr.write(`kept the world of "${ctx.task.name}": ${dir}\n`)
  })
  return dir
}

export interface Outcome {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** What the helper wrote on its report descriptor (fd 3). */
  report: string
}

export interface RunOptions {
  cwd?: string
  /** Extra descriptors from fd 4 on, as Node's stdio entries. */
  extra?: Array<'pipe' | 'ignore' | 'inherit' | number>
  /** Give fd 3 as a pipe (default true). */
  reportPipe?: boolean
  input?: string
  env?: NodeJS.ProcessEnv
  /** Run as this user (root's tests of what a plain user meets). */
  uid?: number
  gid?: number
  /** Run this copy of the helper instead (an install's path, for one). */
  program?: string
}

/** Runs the helper to the end and collects everything it and its command said. */
export function run(args: string[], opts: RunOptions = {}): Promise<Outcome> {
  const stdio: StdioOptions = [
    opts.input === undefined ? 'ignore' : 'pipe',
    'pipe',
    'pipe',
    opts.reportPipe === false ? 'ignore' : 'pipe',
    ...(opts.extra ?? []),
  ]
  const child = spawn(opts.program ?? helper, args, {cwd: opts.cwd, env: opts.env, uid: opts.uid, gid: opts.gid, stdio})
  if (opts.input !== undefined) child.stdin!.end(opts.input)
  return collect(child)
}

export function collect(child: ReturnType<typeof spawn>): Promise<Outcome> {
  const chunks: Record<string, Buffer[]> = {stdout: [], stderr: [], report: []}
  child.stdout?.on('data', (b: Buffer) => chunks.stdout.push(b))
  child.stderr?.on('data', (b: Buffer) => chunks.stderr.push(b))
  const report = child.stdio[3] as NodeJS.ReadableStream | null | undefined
  report?.on('data', (b: Buffer) => chunks.report.push(b))
  return new Promise((done, fail) => {
    child.on('error', fail)
    child.on('close', (code, signal) =>
      done({
        code,
        signal,
        stdout: Buffer.concat(chunks.stdout).toString(),
        stderr: Buffer.concat(chunks.stderr).toString(),
        report: Buffer.concat(chunks.report).toString(),
      }),
    )
  })
}

/**
 * Why the helper cannot be run as another user here, if it cannot: a test
 * that does so as root needs a checkout that user can reach (not in a 0700
 * home).
 */
export function unreachableBy(uid: number, gid: number): string | undefined {
  return spawnSync(helper, [], {uid, gid}).error ? `user ${uid} cannot run ${helper} (a directory on the way is closed to others)` : undefined
}

/** The helper's `exec` with a report pipe at fd 3. */
export function execArgs(lock: string, policy: string[], command: string[]): string[] {
  return ['exec', '--lock', lock, '--report-fd', '3', ...policy, '--', ...command]
}

/** `hmm-helper locked FILE` as a boolean. */
export function isLocked(file: string): boolean {
  const r = spawnSync(helper, ['locked', file], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`locked exited ${r.status}: ${r.stderr}`)
  return r.stdout === '1\n'
}

export function abi(): number {
  const r = spawnSync(helper, ['abi'], {encoding: 'utf8'})
  return Number(r.stdout.trim())
}

export const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

/** Polls until check() is true, or fails after ms. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
