// A progress line on stderr for long work (cloning a big tree): shown only
// on a terminal and only once the work has taken more than a second, then
// cleared, so short runs and logs stay clean.

import {formatBytes} from './format.js'

const DELAY_MS = 1000

export interface Progress {
  update(files: number, bytes: number): void
  done(): void
}

export function progressLine(what: string, stream: NodeJS.WriteStream = process.stderr): Progress | undefined {
  if (!stream.isTTY) return undefined
  const started = Date.now()
  let shown = false
  return {
    update(files, bytes) {
      if (Date.now() - started < DELAY_MS) return
      shown = true
      stream.write(`\r\x1b[Khmm: ${what}: ${files.toLocaleString('en-US')} files, ${formatBytes(bytes)}`)
    },
    done() {
      if (shown) stream.write('\r\x1b[K')
    },
  }
}
