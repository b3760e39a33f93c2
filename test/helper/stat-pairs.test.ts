// hmm-helper stat-pairs: the stat data of the same paths under two roots.
import {execFileSync, spawnSync} from 'node:child_process'
import {lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {STAT_WORDS, StatPairs} from '../../src/native/helper.js'
import {HELPER, PROJECT} from '../world.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

/** A directory of its own under the project's .test-worlds, removed after the test. */
function scratch(prefix: string): string {
  mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
  const dir = mkdtempSync(join(PROJECT, '.test-worlds', prefix))
  dirs.push(dir)
  return dir
}

describe('hmm-helper stat-pairs', () => {
  it("answers, for each path, both sides: kind and the stat words of git's index, links not followed", () => {
    const dir = scratch('statpairs-')
    for (const side of ['a', 'b']) mkdirSync(join(dir, side, 'sub'), {recursive: true})
    writeFileSync(join(dir, 'a', 'sub', 'f x'), 'hello')
    writeFileSync(join(dir, 'b', 'sub', 'f x'), 'hello, world')
    symlinkSync('/etc/passwd', join(dir, 'a', 'link'))
    writeFileSync(join(dir, 'b', 'link'), '')
    const paths = ['sub/f x', 'link', 'missing', 'a..b', '..x/...']
    const out = execFileSync(HELPER, ['stat-pairs', join(dir, 'a'), join(dir, 'b')], {input: paths.join('\0') + '\0'})
    expect(out.length).toBe(paths.length * 2 * StatPairs.RECORD)
    const stats = new StatPairs(out)
    const word = (index: number, side: 0 | 1, field: (typeof STAT_WORDS)[number]) => stats.word(index, side, STAT_WORDS.indexOf(field))
    expect([stats.kind(0, 0), stats.kind(0, 1)]).toEqual(['file', 'file'])
    expect([word(0, 0, 'size'), word(0, 1, 'size')]).toEqual([5, 12])
    expect(word(0, 0, 'ino')).toBe(lstatSync(join(dir, 'a', 'sub', 'f x')).ino)
    expect(word(0, 0, 'mtimeSec')).toBe(Math.floor(lstatSync(join(dir, 'a', 'sub', 'f x')).mtimeMs / 1000))
    expect([stats.kind(1, 0), stats.kind(1, 1)]).toEqual(['symlink', 'file'])
    expect(word(1, 0, 'size')).toBe('/etc/passwd'.length)
    expect([stats.kind(2, 0), stats.kind(2, 1)]).toEqual(['missing', 'missing'])
    // Dots that are not a `..` component are names like any other.
    expect([stats.kind(3, 0), stats.kind(4, 0)]).toEqual(['missing', 'missing'])
    // The same root twice: looked at once, both records alike.
    const same = execFileSync(HELPER, ['stat-pairs', join(dir, 'a'), join(dir, 'a')], {input: paths.join('\0') + '\0'})
    for (let i = 0; i < paths.length; i++) {
      const record = (side: number) => same.subarray((2 * i + side) * StatPairs.RECORD, (2 * i + side + 1) * StatPairs.RECORD)
      expect(record(1).equals(record(0))).toBe(true)
      expect(record(0).equals(out.subarray(2 * i * StatPairs.RECORD, (2 * i + 1) * StatPairs.RECORD))).toBe(true)
    }
  })

  it.each([['..'], ['../a/sub/f x'], ['sub/../../a/sub/f x'], ['sub/..'], ['/etc/passwd'], ['//etc/passwd']])(
    'refuses a path that is not below the roots (%j): exit 1, one line naming it, nothing answered',
    path => {
      const dir = scratch('statpairs-')
      mkdirSync(join(dir, 'a', 'sub'), {recursive: true})
      writeFileSync(join(dir, 'a', 'sub', 'f x'), 'hello')
      const input = `sub/f x\0${path}\0`
      for (const args of [
        ['stat-pairs', join(dir, 'a'), join(dir, 'a')],
        ['clone', '--stat-pairs', join(dir, 'a'), join(dir, 'copy')],
      ]) {
        const r = spawnSync(HELPER, args, {input})
        expect({status: r.status, stdout: r.stdout.length, stderr: r.stderr.toString()}).toEqual({
          status: 1,
          stdout: 0,
          stderr: `hmm-helper: ${args[0]}: not a path below the roots: ${path}\n`,
        })
      }
    },
  )
})

describe('hmm-helper larger-than', () => {
  it('exits 3 when a path on stdin is a regular file of more than LIMIT bytes, or they are more than TOTAL together, else 0 and writes them back: links not followed, missing paths no file', () => {
    const dir = scratch('larger-')
    writeFileSync(join(dir, 'ten'), '0123456789')
    writeFileSync(join(dir, '-dash\nnew line'), '0123456789')
    symlinkSync('ten', join(dir, 'link'))
    mkdirSync(join(dir, 'sub'))
    const status = (limit: string, paths: string[], total = '100') =>
      spawnSync(HELPER, ['larger-than', limit, total], {cwd: dir, input: paths.map(p => `${p}\0`).join('')}).status
    expect(status('10', ['ten', 'link', 'sub', 'missing'])).toBe(0)
    // Together: 20 bytes of regular files (the link and the directory count nothing).
    expect(status('10', ['ten', 'link', 'sub', '-dash\nnew line'], '20')).toBe(0)
    expect(status('10', ['ten', 'link', 'sub', '-dash\nnew line'], '19')).toBe(3)
    expect(status('9', ['link', 'sub', 'missing', 'ten'])).toBe(3)
    expect(status('9', ['link', 'sub', '-dash\nnew line'])).toBe(3)
    // The link is looked at, not what it leads to.
    expect(status('9', ['link'])).toBe(0)
    expect(status('0', [])).toBe(0)
    // Within the limits, the paths back as git update-index takes them: a nested repository's (`dir/`) by its name.
    const written = spawnSync(HELPER, ['larger-than', '10', '100'], {cwd: dir, input: 'ten\0sub/\0-dash\nnew line\0missing\0'})
    expect({status: written.status, stdout: written.stdout.toString()}).toEqual({status: 0, stdout: 'ten\0sub\0-dash\nnew line\0missing\0'})
    expect(spawnSync(HELPER, ['larger-than', '-1', '9'], {cwd: dir, input: ''}).status).toBe(2)
    expect(spawnSync(HELPER, ['larger-than', '9'], {cwd: dir, input: ''}).status).toBe(2)
    expect(spawnSync(HELPER, ['larger-than', '9', '9'], {cwd: dir, input: '../x/ten\0'}).status).toBe(1)
  })

  it('reads the paths of each FILE given in turn instead of stdin, and counts them together', () => {
    const dir = scratch('larger-')
    writeFileSync(join(dir, 'ten'), '0123456789')
    writeFileSync(join(dir, 'five'), '01234')
    writeFileSync(join(dir, 'first'), 'ten\0sub/\0')
    writeFileSync(join(dir, 'second'), 'five\0')
    mkdirSync(join(dir, 'sub'))
    const run = (total: string, files: string[]) => spawnSync(HELPER, ['larger-than', '10', total, ...files], {cwd: dir, input: 'stdin-is-not-read\0'})
    const both = run('15', ['first', 'second'])
    expect({status: both.status, stdout: both.stdout.toString()}).toEqual({status: 0, stdout: 'ten\0sub\0five\0'})
    expect(run('14', ['first', 'second']).status).toBe(3)
    const missing = run('15', ['first', 'none'])
    expect({status: missing.status, stdout: missing.stdout.length}).toEqual({status: 1, stdout: 0})
    expect(missing.stderr.toString()).toMatch(/^hmm-helper: larger-than: cannot read none: /)
  })
})
