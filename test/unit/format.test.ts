import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {formatAge, formatTable, printable, printableJson, tildify} from '../../src/ui/format.js'

describe('formatAge', () => {
  it('uses the largest whole unit', () => {
    expect(formatAge(0)).toBe('0s')
    expect(formatAge(59_999)).toBe('59s')
    expect(formatAge(60_000)).toBe('1m')
    expect(formatAge(2 * 3600_000 + 59 * 60_000)).toBe('2h')
    expect(formatAge(3 * 86400_000)).toBe('3d')
    expect(formatAge(-5000)).toBe('0s')
  })
})

describe('tildify', () => {
  it('shows paths under home with ~ and leaves others', () => {
    expect(tildify('/home/me/src/dwim', '/home/me')).toBe('~/src/dwim')
    expect(tildify('/home/me', '/home/me')).toBe('~')
    expect(tildify('/home/meow/x', '/home/me')).toBe('/home/meow/x')
    expect(tildify('/srv/x', '/')).toBe('/srv/x')
  })
})

describe('formatTable', () => {
  it('renders the SPEC listing exactly', () => {
    const table = formatTable(
      ['ID', 'NAME', 'STATE', 'AGE', 'ORIGIN'],
      [
        ['k3xq9a', 'parser', 'done', '2h', '~/src/dwim'],
        ['p7mw2d', '-', 'running', '5m', '~/src/dwim'],
      ],
      ['left', 'left', 'left', 'right', 'left'],
    )
    expect(table).toBe('ID      NAME    STATE    AGE  ORIGIN\n' + 'k3xq9a  parser  done      2h  ~/src/dwim\n' + 'p7mw2d  -       running   5m  ~/src/dwim\n')
  })
})

describe('printable', () => {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const acting = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u

  it('leaves what prints as it is: a message made printable twice is the same', () => {
    for (const message of [
      'workspace k3xq9a (parser) does not apply to ~/src/dwim: \'a b.txt\' "quoted" <U+202E> ?',
      'changed 日本語, é, ☃, emoji 😀, `code` and 100%',
    ])
      expect(printable(message)).toBe(message)
    fc.assert(
      fc.property(fc.string({unit: 'binary'}), text => {
        const shown = printable(text)
        expect(shown).not.toMatch(acting)
        expect(printable(shown)).toBe(shown)
      }),
    )
  })
})

describe('printableJson', () => {
  it('escapes DEL, C1 and format characters too, and reads back the same', () => {
    fc.assert(
      fc.property(fc.array(fc.record({origin: fc.string({unit: 'binary'})})), value => {
        const json = printableJson(value, 2)
        // eslint-disable-next-line no-control-regex -- matching control characters is the point
        expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u)
        expect(JSON.parse(json)).toEqual(value)
      }),
    )
    expect(printableJson({tree: '/a\u202eb\u009b\u{e0001}'})).toBe('{"tree":"/a\\u202eb\\u009b\\udb40\\udc01"}')
  })
})
