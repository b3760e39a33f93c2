// Property test: mayExclude (src/native/may-exclude.ts), asked in Node to
// spare the helper's process, never says "no" where the helper's matcher
// (native-helpers/exclude.c) excludes one of the paths: random patterns
// files and trees of names made of the characters their syntax turns on
// (`*`, `?`, `\`, `!`, `#`, `/`, brackets, trailing spaces and CRs, NUL, a
// two-byte character).
//
// HMM_PROPERTY_RUNS (default 1000) sets how many cases, HMM_PROPERTY_SEED the seed.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'
import {mayExclude} from '../../src/native/may-exclude.js'
import {HELPER} from '../world.js'

const RUNS = Number(process.env.HMM_PROPERTY_RUNS ?? 1000)
const SEED = Number(process.env.HMM_PROPERTY_SEED ?? 20261207)

const dir = mkdtempSync('/var/tmp/hmm-may-exclude-')
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** The paths the helper excludes by the patterns. */
function helperExcludes(patterns: string, paths: string[]): string[] {
  const file = join(dir, 'patterns')
  writeFileSync(file, patterns)
  const r = spawnSync(HELPER, ['excluded', file], {input: paths.map(path => `${path}\0`).join(''), encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`hmm-helper excluded: ${r.stderr}`)
  return r.stdout.split('\0').filter(Boolean)
}

const name = fc.string({unit: fc.constantFrom('a', 'é', '.', ' ', '\\'), minLength: 1, maxLength: 3})
const path = fc.array(name, {minLength: 1, maxLength: 3}).map(names => names.join('/'))
const line = fc
  .string({unit: fc.constantFrom('a', 'é', '.', '*', '?', '\\', '/', '!', '#', ' ', '\r', '\0', '[', ']'), maxLength: 5})
  .filter(text => !text.includes('\n'))

describe('mayExclude', () => {
  it('says yes wherever the helper excludes a path', () => {
    fc.assert(
      fc.property(fc.array(line, {minLength: 1, maxLength: 4}), fc.array(path, {minLength: 1, maxLength: 6}), (lines, paths) => {
        const patterns = lines.join('\n') + '\n'
        if (helperExcludes(patterns, paths).length > 0) expect(mayExclude(patterns, paths)).toBe(true)
      }),
      {numRuns: RUNS, seed: SEED},
    )
  })

  it('says no for a tree without a name the default patterns could match, and yes for one with', () => {
    const defaults = '.env\n.env.*\n!.env.example\n'
    expect(mayExclude(defaults, ['src/main.c', 'README.md', 'env/.envrc', 'a.env'])).toBe(false)
    expect(mayExclude(defaults, ['src/main.c', 'config/.env.local'])).toBe(true)
    // `?` is one byte to the helper: two of them can be one two-byte character.
    const twoBytes = '??.env\n'
    expect(helperExcludes(twoBytes, ['é.env'])).toEqual(['é.env'])
    expect(mayExclude(twoBytes, ['é.env'])).toBe(true)
    // Review 18: a `/` in a bracket expression is not where the last part starts; a line ends at a NUL.
    for (const [patterns, path] of [
      ['.env[/.]local\n', '.env.local'],
      ['secret\0x\n', 'secret'],
    ]) {
      expect(helperExcludes(patterns, [path])).toEqual([path])
      expect(mayExclude(patterns, [path])).toBe(true)
    }
  })
})
