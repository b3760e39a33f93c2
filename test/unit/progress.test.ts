import {afterEach, describe, expect, it, vi} from 'vitest'
import {progressLine} from '../../src/ui/progress.js'

function fakeStream(isTTY: boolean): NodeJS.WriteStream & {text: string} {
  const stream = {isTTY, text: '', write: (chunk: string) => ((stream.text += chunk), true)}
  return stream as unknown as NodeJS.WriteStream & {text: string}
}

afterEach(() => vi.useRealTimers())

describe('the progress line', () => {
  it('says nothing when stderr is not a terminal', () => {
    expect(progressLine('cloning', fakeStream(false))).toBeUndefined()
  })

  it('says nothing for work done within a second, then shows files and bytes, and clears itself', () => {
    vi.useFakeTimers()
    const stream = fakeStream(true)
    const progress = progressLine('cloning /src/p', stream)!
    progress.update(10, 2048)
    expect(stream.text).toBe('')
    vi.advanceTimersByTime(1500)
    progress.update(12_345, 5 * 1024 * 1024)
    expect(stream.text).toBe('\r\x1b[Khmm: cloning /src/p: 12,345 files, 5.0 MB')
    progress.done()
    expect(stream.text.endsWith('\r\x1b[K')).toBe(true)
  })
})
