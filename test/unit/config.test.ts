import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {configPath, everyWrite, loadConfig, parseConfig, settingsFor} from '../../src/sandbox/config.js'
import {HmmError} from '../../src/ui/errors.js'
import {PROJECT} from '../world.js'

const HOME = '/home/me'
const FILE = '/home/me/.config/hmm/config.toml'

function parse(text: string) {
  return parseConfig(text, FILE, HOME)
}

/** The one line a bad file gives. */
function failure(text: string): string {
  try {
    parse(text)
  } catch (error) {
    expect(error).toBeInstanceOf(HmmError)
    return (error as Error).message
  }
  throw new Error('no failure')
}

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

describe('the config file', () => {
  it('lives in $XDG_CONFIG_HOME/hmm, else ~/.config/hmm', () => {
    expect(configPath({XDG_CONFIG_HOME: '/x/conf'}, HOME)).toBe('/x/conf/hmm/config.toml')
    expect(configPath({}, HOME)).toBe(FILE)
    // A relative XDG_CONFIG_HOME is invalid (XDG Base Directory): the default applies.
    expect(configPath({XDG_CONFIG_HOME: 'conf'}, HOME)).toBe(FILE)
  })

  it('is optional: without it, nothing is added and isolation is full', () => {
    mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
    const home = mkdtempSync(join(PROJECT, '.test-worlds', 'config-'))
    dirs.push(home)
    const config = loadConfig({}, home)
    const settings = settingsFor(config, ['make'], {})
    expect(settings).toMatchObject({write: [], hide: [], unhide: [], env: {keep: [], remove: []}, isolation: 'full', net: undefined})
  })

  it('reads every key, expanding ~', () => {
    const config = parse(`
write = ["~/.m2", "/opt/cache"]
hide = ["~/work/.env"]
unhide = ["~/.npmrc"]
isolation = "landlock-only"
net = ["github.com", "*.npmjs.org"]
[env]
keep = ["GITHUB_TOKEN"]
remove = ["MY_*"]
`)
    expect(settingsFor(config, ['make'], {})).toMatchObject({
      write: ['/home/me/.m2', '/opt/cache'],
      hide: ['/home/me/work/.env'],
      unhide: ['/home/me/.npmrc'],
      env: {keep: ['GITHUB_TOKEN'], remove: ['MY_*']},
      isolation: 'landlock-only',
      net: ['github.com', '*.npmjs.org'],
    })
    expect(settingsFor(parse('net = "none"'), ['make'], {}).net).toBe('none')
  })

  it("adds an agent's table when the command's base name matches", () => {
    const config = parse(`
write = ["~/.m2"]
[agent.aider]
write = ["~/.aider"]
isolation = "landlock-only"
[agent.aider.env]
keep = ["AIDER_KEY"]
`)
    const aider = settingsFor(config, ['/usr/local/bin/aider', '--yes'], {})
    expect(aider.write).toEqual(['/home/me/.m2', '/home/me/.aider'])
    expect(aider.env.keep).toEqual(['AIDER_KEY'])
    expect(aider.isolation).toBe('landlock-only')
    // Nothing of its own is kept apart: hmm knows only the built-in agents' files.
    expect(aider.agent).toEqual({
      name: 'aider',
      from: 'config file',
      sets: {write: ['/home/me/.aider'], isolation: 'landlock-only', env: {keep: ['AIDER_KEY']}},
      layers: [],
      state: [],
      logins: [],
      inPlace: [],
      records: [],
    })
    const other = settingsFor(config, ['make'], {})
    expect(other.write).toEqual(['/home/me/.m2'])
    expect(other.isolation).toBe('full')
    expect(other.agent).toBeUndefined()
  })

  it('refuses a bad file with one line naming the file and the key', () => {
    expect(failure('write = "~/.m2"')).toBe('~/.config/hmm/config.toml: write: expected a list of paths')
    expect(failure('hide = [1]')).toBe('~/.config/hmm/config.toml: hide: expected a list of paths')
    expect(failure('unhide = ["relative/path"]')).toBe(
      '~/.config/hmm/config.toml: unhide: expected a list of paths (absolute or starting with ~/): relative/path',
    )
    expect(failure('isolation = "none"')).toBe('~/.config/hmm/config.toml: isolation: expected "full" or "landlock-only"')
    expect(failure('net = 3')).toBe('~/.config/hmm/config.toml: net: expected "none", "profile" or a list of hosts')
    expect(failure('env = ["A"]')).toBe('~/.config/hmm/config.toml: env: expected a table (keep = [...], remove = [...])')
    expect(failure('[env]\nkeep = "A"')).toBe('~/.config/hmm/config.toml: env.keep: expected a list of variable names')
    expect(failure('[env]\nsave = ["A"]')).toBe('~/.config/hmm/config.toml: env.save: unknown key (keys: keep, remove)')
    expect(failure('writable = []')).toBe(
      '~/.config/hmm/config.toml: writable: unknown key (keys: write, show, hide, unhide, home, exclude, env, isolation, net, max_file_size, max_read_size, agent)',
    )
    expect(failure('[agent.claude]\nwrite = 1')).toBe('~/.config/hmm/config.toml: agent.claude.write: expected a list of paths')
    expect(failure('agent = 1')).toBe('~/.config/hmm/config.toml: agent: expected tables [agent.<command name>]')
    expect(failure('[agent.claude]\nagent = {}')).toBe(
      '~/.config/hmm/config.toml: agent.claude.agent: unknown key (keys: write, show, hide, unhide, home, exclude, env, isolation, net)',
    )
  })

  it('refuses a file that is not TOML with one line naming the file and the line', () => {
    const message = failure('write = [\n"a"\nhide = 1')
    expect(message).toMatch(/^~\/\.config\/hmm\/config\.toml: line \d+: \S/)
    expect(message).not.toContain('\n')
  })

  it('refuses a config path that cannot be read as a file', () => {
    mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
    const home = mkdtempSync(join(PROJECT, '.test-worlds', 'config-'))
    dirs.push(home)
    mkdirSync(join(home, '.config', 'hmm', 'config.toml'), {recursive: true})
    expect(() => loadConfig({}, home)).toThrow(/^~\/\.config\/hmm\/config\.toml: cannot be read: /)
    rmSync(join(home, '.config', 'hmm', 'config.toml'), {recursive: true})
    writeFileSync(join(home, '.config', 'hmm', 'config.toml'), 'hide = ["~/secret"]\n')
    expect(settingsFor(loadConfig({}, home), ['x'], {}).hide).toEqual([join(home, 'secret')])
  })

  it('has built-in profiles for claude (~/.claude, ~/.claude.json) and codex (~/.codex)', () => {
    const none = parse('')
    expect(settingsFor(none, ['claude', '--continue'], {})).toMatchObject({
      write: ['/home/me/.claude', '/home/me/.claude.json'],
      agent: {name: 'claude', from: 'built-in'},
    })
    expect(settingsFor(none, ['/usr/local/bin/codex'], {})).toMatchObject({write: ['/home/me/.codex'], agent: {name: 'codex', from: 'built-in'}})
    // Where the agent is told to keep its files elsewhere, that is what it writes.
    expect(settingsFor(none, ['claude'], {CLAUDE_CONFIG_DIR: '/x/claude'}).write).toEqual(['/x/claude'])
    expect(settingsFor(none, ['codex'], {CODEX_HOME: '/x/codex'}).write).toEqual(['/x/codex'])
    expect(settingsFor(none, ['make'], {}).agent).toBeUndefined()
  })

  it("keeps each built-in agent's directory apart, its login through, its state a copy, and knows the only places it writes without a layer", () => {
    const none = parse('')
    expect(settingsFor(none, ['claude'], {}).agent).toMatchObject({
      layers: ['/home/me/.claude'],
      state: ['/home/me/.claude.json'],
      logins: ['/home/me/.claude/.credentials.json'],
      inPlace: expect.arrayContaining(['/home/me/.claude/projects', '/home/me/.claude/history.jsonl', '/home/me/.claude/.credentials.json']),
      records: expect.arrayContaining(['/home/me/.claude/projects', '/home/me/.claude/history.jsonl', '/home/me/.claude/backups']),
    })
    expect(settingsFor(none, ['codex'], {CODEX_HOME: '/x/codex'}).agent).toMatchObject({
      layers: ['/x/codex'],
      state: [],
      logins: ['/x/codex/auth.json'],
      inPlace: ['/x/codex/sessions', '/x/codex/log', '/x/codex/archived_sessions', '/x/codex/history.jsonl', '/x/codex/auth.json'],
    })
    // A profile the config file changed to write elsewhere keeps nothing of the built-in places.
    expect(settingsFor(parse('[agent.claude]\nwrite = ["~/.other"]\n'), ['claude'], {}).agent).toMatchObject({
      layers: [],
      state: [],
      logins: [],
      inPlace: [],
      records: [],
    })
  })

  it("gives each agent its own places back (login, MCP servers, transcripts) and hides them from every other command, where the agent's variable puts them too", () => {
    const none = parse('')
    expect(settingsFor(none, ['claude'], {}).unhide).toEqual(['/home/me/.claude', '/home/me/.claude.json'])
    expect(settingsFor(none, ['codex'], {}).unhide).toEqual(['/home/me/.codex'])
    expect(settingsFor(none, ['npm'], {}).unhide).toEqual([])
    const moved = {CLAUDE_CONFIG_DIR: '/x/claude', CODEX_HOME: '/x/codex'}
    expect(settingsFor(none, ['npm'], moved).hide).toEqual(['/x/claude', '/x/codex'])
    expect(settingsFor(none, ['claude'], moved)).toMatchObject({hide: ['/x/claude', '/x/codex'], unhide: ['/x/claude']})
  })

  it('lets the config file change a built-in profile key by key', () => {
    const config = parse('write = ["~/.m2"]\n[agent.claude]\nwrite = ["~/.claude"]\nhide = ["~/.claude/.credentials.json"]\n')
    expect(settingsFor(config, ['claude'], {})).toMatchObject({
      write: ['/home/me/.m2', '/home/me/.claude'],
      // Hidden by name in the file: hidden still, in the places given back.
      hide: ['/home/me/.claude/.credentials.json'],
      unhide: ['/home/me/.claude', '/home/me/.claude.json'],
      agent: {name: 'claude', from: 'built-in, changed by the config file'},
    })
    expect(settingsFor(parse('[agent.codex]\nisolation = "landlock-only"\n'), ['codex'], {})).toMatchObject({
      write: ['/home/me/.codex'],
      isolation: 'landlock-only',
    })
  })

  it('knows what any run could write: the top level and every profile, built in or in the file', () => {
    const config = parse('write = ["~/.m2"]\n[agent.aider]\nwrite = ["~/.aider"]\n')
    expect(everyWrite(config, {}).sort()).toEqual(['/home/me/.aider', '/home/me/.claude', '/home/me/.claude.json', '/home/me/.codex', '/home/me/.m2'])
  })
})
