// Shared by the tests of diff, apply, merge and pr: making a workspace with
// a script, and a snapshot of a directory to prove it was left untouched.
import {createHash} from 'node:crypto'
import {lstatSync, readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {type HmmOptions, type HmmResult, type World, workspaceLine} from '../world.js'

export interface Made {
  id: string
  name?: string
  tree: string
  label: string
}

/** hmm's output exactly as printed (final newlines kept). */
export function hmm(world: World, args: string[], options: HmmOptions = {}): Promise<HmmResult> {
  return world.hmm(args, {stripFinalNewline: false, ...options})
}

/** Runs `sh -c script` in a new workspace of the world's origin (or cwd); fails the test if it fails. */
export async function made(world: World, script: string, name?: string, cwd = world.origin): Promise<Made> {
  const result = await world.hmm(['run', ...(name ? ['-n', name] : []), 'sh', '-c', script], {cwd})
  if (result.exitCode !== 0) throw new Error(`hmm run failed (${result.exitCode}): ${result.stderr}`)
  const ws = workspaceLine(result.stderr)
  return {...ws, label: ws.name ? `${ws.id} (${ws.name})` : ws.id}
}

/** Every entry under dir (the .git directory too): kind, mode and content hash, by relative path. */
export function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {}
  const walk = (rel: string) => {
    const path = join(dir, rel)
    const stat = lstatSync(path)
    const mode = (stat.mode & 0o7777).toString(8)
    if (stat.isSymbolicLink()) entries[rel] = `link ${readlinkSync(path)}`
    else if (stat.isDirectory()) {
      entries[rel] = `dir ${mode}`
      for (const name of readdirSync(path)) walk(rel ? join(rel, name) : name)
    } else entries[rel] = `file ${mode} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
  }
  walk('')
  return entries
}

/** Lines of stderr that hmm said. */
export function said(stderr: string): string[] {
  return stderr.split('\n').filter(line => line.startsWith('hmm: '))
}

/** hmm merge or pr without the lines naming the commits they take (review.test.ts holds those to SPEC). */
export async function taking(world: World, args: string[], options: HmmOptions = {}): Promise<HmmResult> {
  const result = await hmm(world, args, options)
  return {...result, stderr: result.stderr.replace(/^hmm: taking [0-9a-f]{7,} .*\n/gm, '')}
}
