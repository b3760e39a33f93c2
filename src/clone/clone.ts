// Making the workspace tree: a copy-on-write clone of the origin.
//
// The helper's parallel clone (FICLONE, falling back to copy_file_range,
// from several threads) is the normal path; `cp -a --reflink=auto` is the
// fallback where the helper's clone mode is unavailable.
import {execa} from 'execa'
import {existsSync} from 'node:fs'
import {HmmError, debug} from '../ui/errors.js'
import {HELPER_PATH} from '../native/helper.js'
import {removeDirectory} from '../workspaces/remove.js'

export interface CloneOptions {
  /** Called with cumulative counts while cloning (for progress display). */
  onProgress?: (files: number, bytes: number) => void
  signal?: AbortSignal
}

/** macOS: clonefile(2) of the whole tree through cp -c (APFS), a plain copy elsewhere. */
async function cloneOnDarwin(source: string, destination: string): Promise<void> {
  for (const flags of [['-c', '-pR'], ['-pR']]) {
    const result = await execa('cp', [...flags, source, destination], {reject: false, stdin: 'ignore', stdout: 'ignore'})
    if (result.exitCode === 0) return
    removeDirectory(destination)
    if (flags.length === 1) throw new HmmError(`could not clone ${source}: ${String(result.stderr).trim().split('\n').at(-1)}`)
  }
}

export async function cloneTree(source: string, destination: string, options: CloneOptions = {}): Promise<void> {
  if (process.platform === 'darwin') return cloneOnDarwin(source, destination)
  const useHelper = existsSync(HELPER_PATH)
  const [file, args] = useHelper
    ? [HELPER_PATH, ['clone', ...(options.onProgress ? ['--progress-fd', '3'] : []), source, destination]]
    : ['cp', ['-a', '--reflink=auto', '--', source, destination]]
  debug(`clone: ${file} ${args.join(' ')}`)
  const child = execa(file, args, {
    reject: false,
    stdio: options.onProgress ? ['ignore', 'ignore', 'pipe', 'pipe'] : ['ignore', 'ignore', 'pipe'],
    cancelSignal: options.signal,
  })
  if (options.onProgress) {
    let pending = ''
    ;(child.stdio[3] as unknown as NodeJS.ReadableStream | undefined)?.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      const last = lines.reverse().find(line => line.startsWith('P '))
      if (last) {
        const [, files, bytes] = last.split(' ')
        options.onProgress!(Number(files), Number(bytes))
      }
    })
  }
  const result = await child
  // Notes (e.g. a skipped socket) are passed on; the clone still succeeded.
  const stderr = String(result.stderr ?? '')
  if (result.exitCode === 0) {
    if (stderr) process.stderr.write(stderr.endsWith('\n') ? stderr : stderr + '\n')
    return
  }
  const reason = stderr.trim().split('\n').at(-1)?.replace(/^hmm: (clone: )?/, '') || `exit status ${result.exitCode}`
  throw new HmmError(`could not clone ${source}: ${reason}`)
}
