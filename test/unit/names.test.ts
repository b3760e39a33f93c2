import {describe, expect, it} from 'vitest'
import {ID_ALPHABET, checkName, label} from '../../src/workspaces/names.js'
import {newId} from '../../src/workspaces/ids.js'
import {splitAtCommand} from '../../src/ui/split-argv.js'

describe('IDs', () => {
  it('are six characters without i, l, o, u', () => {
    for (let n = 0; n < 200; n++) expect(newId()).toMatch(/^[0-9a-hjkmnp-tv-z]{6}$/)
    expect(ID_ALPHABET).not.toMatch(/[ilou]/)
  })
})

describe('names', () => {
  it('accepts letters, digits, - _ . not starting with -', () => {
    for (const name of ['parser', 'fix-1', 'a_b.c', 'a.lock.b', '9']) expect(checkName(name)).toBe(name)
  })
  it.each(['.hidden', 'a..b', 'x.', 'x.lock'])('rejects %j, which git refuses as a branch name', name => {
    expect(() => checkName(name)).toThrow(/git refuses it as a branch name/)
  })
  it.each(['-x', 'a b', 'a/b', 'é', '', '..', 'a\nb', 'x'.repeat(65)])('rejects %j', name => {
    expect(() => checkName(name)).toThrow(/a workspace's name/)
  })
  it('labels with the name when there is one', () => {
    expect(label({id: 'k3xq9a', name: 'parser'})).toBe('k3xq9a (parser)')
    expect(label({id: 'k3xq9a', name: null})).toBe('k3xq9a')
  })
})

describe('splitAtCommand', () => {
  const withValue = ['-n', '--name', '-w', '--write']
  it('gives everything from the command on to the command', () => {
    expect(splitAtCommand(['claude', '--resume', '-n', 'x'], withValue)).toEqual({own: [], command: ['claude', '--resume', '-n', 'x']})
    expect(splitAtCommand(['-n', 'p', '--rm', 'make', '-j4'], withValue)).toEqual({own: ['-n', 'p', '--rm'], command: ['make', '-j4']})
    expect(splitAtCommand(['-w', '/x', '--', '-weird'], withValue)).toEqual({own: ['-w', '/x'], command: ['-weird']})
    expect(splitAtCommand(['--name=p', 'ls'], withValue)).toEqual({own: ['--name=p'], command: ['ls']})
    expect(splitAtCommand(['--rm'], withValue)).toEqual({own: ['--rm'], command: []})
    expect(splitAtCommand(['-n'], withValue)).toEqual({own: ['-n'], command: []})
  })
})
