import {describe, expect, it} from 'vitest'
import {formatAge, formatTable, tildify} from '../../src/ui/format.js'

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
