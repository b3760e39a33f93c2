// A progress line on stderr for long work (cloning a big tree): shown only
// on a terminal and only once the work has taken more than a second, then
// cleared, so short runs and logs stay clean.

const DELAY_MS = 1000

function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`
}

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
