// ui/patch.ts: git's colour values as git itself turns them into escape
// sequences (compared with `git config --get-color`), and the content's
// control characters made visible.
import {execFileSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {patchColours, patchForTerminal, sgr, visibleBytes} from '../../src/ui/patch.js'

describe('sgr', () => {
  it.each(['green bold', 'red', '#ff0000 ul', 'brightblue', '214 black', 'normal', 'no-bold', 'default', 'bold dim italic reverse strike', 'yellow blue'])(
    'turns %j into what git makes of it',
    value => {
      expect(sgr(value)).toBe(execFileSync('git', ['config', '--get-color', '', value], {encoding: 'utf8'}))
    },
  )

  it('reads nothing git would not: an unknown word, three colours', () => {
    expect(sgr('grean')).toBeUndefined()
    expect(sgr('red green blue')).toBeUndefined()
  })
})

describe('patchColours', () => {
  it("takes the user's settings over git's defaults, plain as context, and the default where a value is unreadable", () => {
    const colours = patchColours(['color.diff.new=blue bold', 'color.diff.plain=dim', 'color.diff.old=nonsense'])
    expect(colours).toEqual({context: '\x1b[2m', meta: '\x1b[1m', frag: '\x1b[36m', func: '', old: '\x1b[31m', new: '\x1b[1;34m'})
  })
})

describe('patchForTerminal', () => {
  it('shows control characters, C1 controls and bidi overrides instead of acting on them; leaves the rest', () => {
    const bytes = Buffer.from('a\x1b[2K\x07\r\x7f\tb \u009b \u202e \u2066 é ☃', 'utf8')
    expect(visibleBytes(bytes).toString('utf8')).toBe('a^[[2K^G^M^?\tb <U+009B> <U+202E> <U+2066> é ☃')
    const plain = Buffer.from('plain text é\n')
    expect(visibleBytes(plain)).toBe(plain)
  })

  it('shows every invisible format character (zero-width, BOM, tags, separators) as <U+...>; bytes that are not UTF-8 pass as they are', () => {
    const bytes = Buffer.from('a\u200bb\u200fc\u061cd\ufeffe\u{e0041}f\u2028g \u4e2d', 'utf8')
    expect(visibleBytes(bytes).toString('utf8')).toBe('a<U+200B>b<U+200F>c<U+061C>d<U+FEFF>e<U+E0041>f<U+2028>g \u4e2d')
    const latin1 = Buffer.from([0x61, 0xe2, 0x80, 0x20, 0xc2, 0xe9, 0xed, 0xa0, 0x80, 0xe2, 0x80, 0xae])
    expect(visibleBytes(latin1)).toEqual(Buffer.concat([latin1.subarray(0, 9), Buffer.from('<U+202E>')]))
  })

  it('colours as git does: meta, frag and function, old and new, sign apart from content', () => {
    const patch = Buffer.from('abc1234 subject\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@ fn\n-old\n+new\n+++x\n context\n')
    const out = patchForTerminal(patch, patchColours([])).toString()
    expect(out).toBe(
      [
        'abc1234 subject',
        '\x1b[1mdiff --git a/f b/f\x1b[m',
        '\x1b[1m--- a/f\x1b[m',
        '\x1b[1m+++ b/f\x1b[m',
        '\x1b[36m@@ -1 +1 @@\x1b[m fn',
        '\x1b[31m-\x1b[m\x1b[31mold\x1b[m',
        '\x1b[32m+\x1b[m\x1b[32mnew\x1b[m',
        '\x1b[32m+\x1b[m\x1b[32m++x\x1b[m',
        ' context',
        '',
      ].join('\n'),
    )
    expect(patchForTerminal(patch, undefined)).toEqual(patch)
  })
})
