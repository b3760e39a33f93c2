// git/changes.ts's quoteAmbiguousHeaders: patches git makes for binary,
// empty and mode-only changes, which git apply then reads, for paths git
// itself cannot split in its `diff --git` line.
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {quoteAmbiguousHeaders} from '../../src/git/changes.js'

let dir: string | undefined
afterEach(() => dir && rmSync(dir, {recursive: true, force: true}))

const git = (cwd: string, args: string[], input?: Buffer) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {cwd, input, stdio: ['pipe', 'pipe', 'pipe']})

describe('quoteAmbiguousHeaders', () => {
  it.each(['d /bin', 'a b/c d', 'z /y /x', 'x y', 'plain/path', 'end '])('makes the patch of %j one git apply reads', path => {
    dir = mkdtempSync(join(tmpdir(), 'hmm-header-'))
    git(dir, ['init', '-q'])
    git(dir, ['commit', '-q', '--allow-empty', '-m', 'base'])
    mkdirSync(join(dir, dirname(path)), {recursive: true})
    writeFileSync(join(dir, path), Buffer.from([0, 1, 2]))
    writeFileSync(join(dir, `${path}.empty`), '')
    git(dir, ['add', '.'])
    const patch = quoteAmbiguousHeaders(git(dir, ['diff', '--cached', '--binary', '--full-index']))
    git(dir, ['reset', '-q', '--hard'])
    git(dir, ['apply', '--binary', '-'], patch)
    expect(readFileSync(join(dir, path))).toEqual(Buffer.from([0, 1, 2]))
    expect(statSync(join(dir, `${path}.empty`)).size).toBe(0)
  })

  it('leaves other headers as they are (a rename names its paths in lines of its own)', () => {
    const patch = Buffer.from('diff --git a/x y b/x y\nnew file mode 100644\ndiff --git a/q /r b/s /t\nrename from q /r\nrename to s /t\n')
    expect(quoteAmbiguousHeaders(patch)).toBe(patch)
  })
})
