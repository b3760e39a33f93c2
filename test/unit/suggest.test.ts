import {describe, expect, it} from 'vitest'
import {nearest, unknownCommand} from '../../src/ui/suggest.js'

const COMMANDS = ['apply', 'diff', 'exec', 'ls', 'merge', 'path', 'pr', 'prune', 'rm', 'run', 'sandbox']

describe('did you mean', () => {
  it('finds the nearest command for a typo, a swap, a missing or an extra letter', () => {
    expect(nearest('lst', COMMANDS)).toBe('ls')
    expect(nearest('mrege', COMMANDS)).toBe('merge')
    expect(nearest('aply', COMMANDS)).toBe('apply')
    expect(nearest('pruen', COMMANDS)).toBe('prune')
    expect(nearest('Diff', COMMANDS)).toBe('diff')
  })

  it('suggests nothing for a word that is nothing like a command', () => {
    expect(nearest('frobnicate', COMMANDS)).toBeUndefined()
    expect(nearest('xyz', COMMANDS)).toBeUndefined()
  })

  it('says so in one line', () => {
    expect(unknownCommand('lst', COMMANDS)).toBe('unknown command lst; did you mean ls?')
    expect(unknownCommand('frobnicate', COMMANDS)).toBe('unknown command frobnicate (hmm help lists the commands)')
  })
})
