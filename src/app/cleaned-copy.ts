// A cleaned copy of one of the user's files (git's, npm's and the package
// managers' configs, shell start-up files), made in the workspace's
// directory and bound over the file it stands for in the command's view.
import {mkdirSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Bind} from '../sandbox/policy.js'

/** Writes `text` to `path` by a rename, so a link there is replaced, never followed. */
export function replaceFile(path: string, text: string, mode: number): void {
  const next = `${path}.hmm-${process.pid}`
  writeFileSync(next, text, {mode})
  renameSync(next, path)
}

/** The copy `dir/name` of `text` (the directory made private if need be), to be bound over `target`. */
export function cleanedCopy(dir: string, name: string, text: string, target: string): Bind {
  mkdirSync(dir, {recursive: true, mode: 0o700})
  const source = join(dir, name)
  replaceFile(source, text, 0o600)
  return {source, target}
}
