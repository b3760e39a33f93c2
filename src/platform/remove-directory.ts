// Deleting a directory tree of hmm's own (a workspace, a failed clone).
import {chmodSync, lstatSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'

/** Lets the owner delete directories the command made read-only (root needs no such help). */
function makeWritable(path: string): void {
  const stat = lstatSync(path, {throwIfNoEntry: false})
  if (!stat?.isDirectory()) return
  chmodSync(path, 0o700)
  for (const entry of readdirSync(path)) makeWritable(join(path, entry))
}

export function removeDirectory(path: string): void {
  try {
    rmSync(path, {recursive: true, force: true, maxRetries: 2})
  } catch (error) {
    if ((error as {code?: string}).code !== 'EACCES' && (error as {code?: string}).code !== 'EPERM') throw error
    makeWritable(path)
    rmSync(path, {recursive: true, force: true})
  }
}
