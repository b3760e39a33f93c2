// The C helper (native-helpers/hmm-helper.c), built by `npm install`: what
// Node cannot do itself — Landlock, flock held across exec, fast cloning.
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {HmmError} from '../ui/errors.js'

const RELATIVE = 'native-helpers/build/hmm-helper'

/**
 * Where the built helper is: found upwards from this module, which is
 * dist/native/helper.js, or dist/list.bundle.js once bundled.
 */
function locate(): string {
  for (const up of ['../../', '../']) {
    const candidate = fileURLToPath(new URL(up + RELATIVE, import.meta.url))
    if (existsSync(candidate)) return candidate
  }
  return fileURLToPath(new URL('../../' + RELATIVE, import.meta.url))
}

export const HELPER_PATH = locate()

export function helperPath(): string {
  if (!existsSync(HELPER_PATH)) {
    throw new HmmError(`the sandbox helper ${HELPER_PATH} is missing; run npm install in hmm's directory to build it`)
  }
  return HELPER_PATH
}

function runHelper(args: string[]): string {
  return execFileSync(helperPath(), args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
}

/** The kernel's Landlock ABI version (0: none). */
export function landlockAbi(): number {
  return Number.parseInt(runHelper(['abi']).trim(), 10) || 0
}

/** Which of the lock files some process holds (without taking them). */
export function lockedFiles(paths: string[]): boolean[] {
  if (paths.length === 0) return []
  const lines = runHelper(['locked', ...paths]).split('\n')
  return paths.map((_, index) => lines[index] === '1')
}
