// The removal tests' hostile process (swapper.c): built with the helper's
// compiler into a directory of the test, and ended by the test whatever
// happened (found by its executable's path, so nothing else is touched).
import {execFileSync} from 'node:child_process'
import {readdirSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const SOURCE = fileURLToPath(new URL('swapper.c', import.meta.url))

/** Compiles the swapper into dir; returns its path. */
export function buildSwapper(dir: string): string {
  const out = join(dir, 'swapper')
  const [cc, ...ccArgs] = (process.env.CC || 'cc').trim().split(/\s+/)
  execFileSync(cc, [...ccArgs, '-O2', '-o', out, SOURCE], {stdio: 'inherit'})
  return out
}

/** Kills every process running the swapper at this path. */
export function killSwappers(path: string): void {
  for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
    let exe: string
    try {
      exe = readlinkSync(`/proc/${pid}/exe`)
    } catch {
      continue
    }
    if (exe === path) {
      try {
        process.kill(Number(pid), 'SIGKILL')
      } catch {}
    }
  }
}
