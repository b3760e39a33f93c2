// The removal tests' hostile processes, built with the helper's compiler into
// a directory of the test: swapper.c, ended by the test whatever happened
// (found by its executable's path, so nothing else is touched), and
// swap-at-open.c and swap-at-unlink.c, loaded into the remover.
import {readdirSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {compile} from './compile.js'

/** Compiles the swapper into dir; returns its path. */
export function buildSwapper(dir: string): string {
  return compile('swapper.c', join(dir, 'swapper'))
}

/** Compiles swap-at-open into dir; returns the library's path, for LD_PRELOAD. */
export function buildSwapAtOpen(dir: string): string {
  return compile('swap-at-open.c', join(dir, 'swap-at-open.so'), ['-shared', '-fPIC', '-ldl'])
}

/** Compiles swap-at-unlink into dir; returns the library's path, for LD_PRELOAD. */
export function buildSwapAtUnlink(dir: string): string {
  return compile('swap-at-unlink.c', join(dir, 'swap-at-unlink.so'), ['-shared', '-fPIC', '-ldl'])
}

/** Kills every process running the swapper at this path, and waits until none runs it (a zombie runs nothing). */
export function killSwappers(path: string): void {
  const running = () =>
    readdirSync('/proc')
      .filter(name => /^\d+$/.test(name))
      .filter(pid => {
        try {
          return readlinkSync(`/proc/${pid}/exe`) === path
        } catch {
          return false
        }
      })
  for (let left = running(); left.length > 0; left = running()) {
    for (const pid of left) {
      try {
        process.kill(Number(pid), 'SIGKILL')
      } catch {}
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
  }
}
