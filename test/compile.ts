// Builds a test's C program (test/*.c) with the helper's compiler.
import {execFileSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

/** Compiles test/<source> to out with the given flags; returns out. */
export function compile(source: string, out: string, flags: string[] = []): string {
  const [cc, ...ccArgs] = (process.env.CC || 'cc').trim().split(/\s+/)
  execFileSync(cc, [...ccArgs, '-O2', ...flags, '-o', out, fileURLToPath(new URL(source, import.meta.url))], {stdio: 'inherit'})
  return out
}
