// Builds a test's C program (test/*.c) with the helper's compiler.
import {execFileSync} from 'node:child_process'
import {basename, dirname} from 'node:path'
import {fileURLToPath} from 'node:url'

/** Compiles test/<source> to out with the given flags; returns out. */
export function compile(source: string, out: string, flags: string[] = []): string {
  const [cc, ...ccArgs] = (process.env.CC || 'cc').trim().split(/\s+/)
  execFileSync(cc, [...ccArgs, '-O2', ...flags, '-o', out, fileURLToPath(new URL(source, import.meta.url))], {stdio: 'inherit'})
  return out
}

/**
 * A spawn's cwd and env that load library into the program (LD_PRELOAD): by
 * its name in the directory the program starts in, as the loader splits the
 * variable at spaces and a checkout may lie under "My Projects".
 */
export function preloading(library: string, env: NodeJS.ProcessEnv = process.env): {cwd: string; env: NodeJS.ProcessEnv} {
  return {cwd: dirname(library), env: {...env, LD_PRELOAD: `./${basename(library)}`}}
}
