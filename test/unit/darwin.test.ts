// The Seatbelt rendering of the policy, checked on any machine: the exact
// profile text, the exact -D parameters, and that no path ever becomes
// profile text. Running it under sandbox-exec is darwin-sandbox-exec.test.ts.
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {darwinPath, darwinPolicy, SANDBOX_EXEC, seatbelt, seatbeltArgs, seatbeltArgv, seatbeltKnowsTiocsti, seatbeltProfile} from '../../src/platform/darwin.js'
import {buildPolicy, SECRETS as DEFAULT_SECRETS, type SandboxPolicy} from '../../src/sandbox/policy.js'
import {PROJECT} from '../world.js'
import {head, lists, parse, tokenize, type Sexpr} from './sexpr.js'

const GOLDEN = readFileSync(new URL('__golden__/seatbelt-profile.sbpl', import.meta.url), 'utf8')

const HOME = '/Users/me'
const DATA = `${HOME}/Library/Application Support/hmm`
const CACHES = ['.cargo', '.rustup', '.cache', '.npm', 'Library/Caches']
const SECRETS = ['.ssh', '.aws', '.gnupg', '.config/gh']
const PROGRAMS = ['.cargo/bin', '.cargo/env', '.cargo/env.fish', '.cargo/env.nu', '.cargo/config.toml', '.cargo/config', '.rustup/toolchains', '.npm/_npx']

/** A Mac's policy, as buildPolicy gives it there (with /tmp both ways, and $TMPDIR through /var). */
const MAC: SandboxPolicy = {
  tree: `${DATA}/k3xq9a/tree/proj`,
  readable: ['/'],
  writable: ['/tmp', '/private/tmp', '/private/var/folders', '/var/folders/zz/abc/T', ...CACHES.map(c => `${HOME}/${c}`), `${HOME}/.m2`],
  readOnly: PROGRAMS.map(p => `${HOME}/${p}`),
  plainOnly: [],
  devices: ['/dev'],
  hidden: [...SECRETS.map(s => `${HOME}/${s}`), DATA],
  tmpdir: `${DATA}/k3xq9a/tmp`,
}

const MAC_PARAMETERS = [
  `TREE=${DATA}/k3xq9a/tree/proj`,
  `TMPDIR=${DATA}/k3xq9a/tmp`,
  'WRITABLE_0=/private/tmp',
  'WRITABLE_1=/private/var/folders',
  'WRITABLE_2=/private/var/folders/zz/abc/T',
  'WRITABLE_3=/Users/me/.cargo',
  'WRITABLE_4=/Users/me/.rustup',
  'WRITABLE_5=/Users/me/.cache',
  'WRITABLE_6=/Users/me/.npm',
  'WRITABLE_7=/Users/me/Library/Caches',
  'WRITABLE_8=/Users/me/.m2',
  'READ_ONLY_0=/Users/me/.cargo/bin',
  'READ_ONLY_1=/Users/me/.cargo/env',
  'READ_ONLY_2=/Users/me/.cargo/env.fish',
  'READ_ONLY_3=/Users/me/.cargo/env.nu',
  'READ_ONLY_4=/Users/me/.cargo/config.toml',
  'READ_ONLY_5=/Users/me/.cargo/config',
  'READ_ONLY_6=/Users/me/.rustup/toolchains',
  'READ_ONLY_7=/Users/me/.npm/_npx',
  'DEVICE_0=/dev',
  'HIDDEN_0=/Users/me/.ssh',
  'HIDDEN_1=/Users/me/.aws',
  'HIDDEN_2=/Users/me/.gnupg',
  'HIDDEN_3=/Users/me/.config/gh',
  `HIDDEN_4=${DATA}`,
  'HIDDEN_ANCESTOR_0=/Users',
  'HIDDEN_ANCESTOR_1=/Users/me',
  'HIDDEN_ANCESTOR_2=/Users/me/.config',
  'HIDDEN_ANCESTOR_3=/Users/me/Library',
  'HIDDEN_ANCESTOR_4=/Users/me/Library/Application Support',
  `TREE_ANCESTOR_0=${DATA}`,
  `TREE_ANCESTOR_1=${DATA}/k3xq9a`,
  `TREE_ANCESTOR_2=${DATA}/k3xq9a/tree`,
  'SYSTEM_SOCKET_0=/private/var/run/mDNSResponder',
  'SYSTEM_SOCKET_1=/private/var/run/syslog',
]

function definitions(policy: SandboxPolicy): string[] {
  return seatbelt(policy).parameters.map(({name, value}) => `${name}=${value}`)
}

type List = Sexpr & {kind: 'list'}

/** The top-level rules: (allow ...) and (deny ...). */
function rules(profile: string): List[] {
  return parse(profile).filter((form): form is List => form.kind === 'list' && ['allow', 'deny'].includes(head(form) ?? ''))
}

/** A rule as `allow file-write*: WRITABLE_0 WRITABLE_1`, for asserting the order of the policy. */
function summary(rule: List): string {
  const operations = rule.items
    .slice(1)
    .filter(item => item.kind === 'symbol')
    .map(item => (item as {name: string}).name)
  const params = [...lists(rule.items)].filter(({list}) => head(list) === 'param').map(({list}) => (list.items[1] as {value: string}).value)
  return `${head(rule)} ${operations.join(' ')}${params.length ? `: ${params.join(' ')}` : ''}`
}

describe('the Seatbelt profile', () => {
  it('is the golden text for a Mac policy, with the exact -D parameters', () => {
    expect(seatbelt(MAC).profile).toBe(GOLDEN)
    expect(definitions(MAC)).toEqual(MAC_PARAMETERS)
  })

  it('orders the rules so hidden wins over writable, and the tree over all', () => {
    expect(rules(seatbelt(MAC).profile).map(summary)).toEqual([
      'allow default',
      'deny file-write* file-link',
      'allow file-write* file-link: WRITABLE_0 WRITABLE_1 WRITABLE_2 WRITABLE_3 WRITABLE_4 WRITABLE_5 WRITABLE_6 WRITABLE_7 WRITABLE_8',
      'deny file-write* file-link: READ_ONLY_0 READ_ONLY_1 READ_ONLY_2 READ_ONLY_3 READ_ONLY_4 READ_ONLY_5 READ_ONLY_6 READ_ONLY_7',
      'allow file-write*: DEVICE_0',
      'deny file-read* file-write* file-link file-clone process-exec: HIDDEN_0 HIDDEN_0 HIDDEN_1 HIDDEN_1 HIDDEN_2 HIDDEN_2 HIDDEN_3 HIDDEN_3 HIDDEN_4 HIDDEN_4',
      'deny file-write-unlink: HIDDEN_ANCESTOR_0 HIDDEN_ANCESTOR_1 HIDDEN_ANCESTOR_2 HIDDEN_ANCESTOR_3 HIDDEN_ANCESTOR_4',
      'allow file-read-metadata: TREE_ANCESTOR_0 TREE_ANCESTOR_1 TREE_ANCESTOR_2',
      'allow file-read* file-write* file-link file-clone process-exec: TREE TMPDIR',
      'deny file-write-unlink: TREE',
      'deny network-outbound',
      'allow network-outbound: TREE TMPDIR SYSTEM_SOCKET_0 SYSTEM_SOCKET_1',
      'deny file-ioctl',
      'deny file-write-setugid',
    ])
  })

  it('with a composed home, denies reading it before its kept places are allowed, the secrets denied after, and the copies allowed after those', () => {
    const policy: SandboxPolicy = {
      ...MAC,
      readable: ['/', `${DATA}/k3xq9a/git-config/global`],
      home: {
        dir: HOME,
        keep: [
          {path: `${HOME}/.nvm`, why: 'toolchain, read-only'},
          {path: `${HOME}/.cache`, why: 'written in place'},
        ],
        links: [],
      },
    }
    const summaries = rules(seatbelt(policy).profile).map(summary)
    const at = (prefix: string) => summaries.findIndex(line => line.startsWith(prefix))
    expect(summaries).toContain('deny file-read-data file-read-xattr process-exec: COMPOSED_HOME')
    expect(summaries).toContain('allow file-read-data file-read-xattr process-exec: HOME_KEPT_0 HOME_KEPT_1')
    expect(summaries).toContain('allow file-read*: READABLE_0')
    expect(at('deny file-read-data')).toBeLessThan(at('allow file-read-data'))
    expect(at('allow file-read-data')).toBeLessThan(at('deny file-read* file-write*'))
    expect(at('deny file-read* file-write*')).toBeLessThan(at('allow file-read*: READABLE_0'))
    expect(definitions(policy)).toEqual(
      expect.arrayContaining([`COMPOSED_HOME=${HOME}`, `HOME_KEPT_0=${HOME}/.nvm`, `READABLE_0=${DATA}/k3xq9a/git-config/global`]),
    )
    // The copy's directories inside the hidden data directory may be looked at on the way to it.
    expect(definitions(policy)).toContain(`TREE_ANCESTOR_3=${DATA}/k3xq9a/git-config`)
  })

  it('is balanced s-expressions whose only strings are parameter names', () => {
    const profile = seatbelt(MAC).profile
    const forms = parse(profile)
    expect(forms[0]).toEqual({
      kind: 'list',
      items: [
        {kind: 'symbol', name: 'version'},
        {kind: 'symbol', name: '1'},
      ],
    })
    const strings = tokenize(profile).filter(token => token.kind === 'string')
    expect(strings.length).toBeGreaterThan(0)
    for (const token of strings) expect((token as {value: string}).value).toMatch(/^[A-Z]+(_[A-Z]+)*(_\d+)?$/)
    // Each string is the one argument of a (param "..."), itself the one argument of a path filter.
    const params = [...lists(forms)].filter(({list}) => list.items.some(item => item.kind === 'string'))
    expect(params.length).toBe(strings.length)
    for (const {list, parent} of params) {
      expect(head(list)).toBe('param')
      expect(list.items).toHaveLength(2)
      expect(['subpath', 'literal', 'path-literal']).toContain(parent && head(parent))
      expect(parent?.items).toHaveLength(2)
    }
    // No path anywhere outside comments: no string holds one, and no symbol.
    const code = profile.replace(/;[^\n]*/g, '')
    expect(code).not.toContain('/')
  })

  it('names exactly the parameters it is given, each once', () => {
    const {profile, parameters} = seatbelt(MAC)
    const named = new Set(
      tokenize(profile)
        .filter(token => token.kind === 'string')
        .map(token => (token as {value: string}).value),
    )
    expect([...named].sort()).toEqual(parameters.map(({name}) => name).sort())
    expect(new Set(parameters.map(({name}) => name)).size).toBe(parameters.length)
  })

  it('never allows without a filter but by (allow default), even when a kind of path is missing', () => {
    for (const policy of [MAC, {...MAC, writable: [], readOnly: [], devices: [], hidden: []}, {...MAC, hidden: ['/x']}]) {
      const unfiltered = rules(seatbelt(policy).profile)
        .filter(rule => rule.items.every(item => item.kind === 'symbol'))
        .map(summary)
      expect(unfiltered).toEqual(['allow default', 'deny file-write* file-link', 'deny file-write-setugid'])
    }
    expect(seatbelt({...MAC, writable: [], readOnly: [], devices: [], hidden: []}).parameters.map(({name}) => name)).toEqual([
      'TREE',
      'TMPDIR',
      'SYSTEM_SOCKET_0',
      'SYSTEM_SOCKET_1',
    ])
  })

  it("denies connecting to unix sockets but those of the tree, the workspace's own temp directory (its TMPDIR) and the system", () => {
    // The attacker's review 3, finding F13: every per-user temp directory (/private/var/folders) was allowed, where
    // Emacs's, Neovim's and VS Code's control sockets are.
    const data = `${HOME}/Library/Application Support/hmm`
    const policy = buildPolicy({
      tree: `${data}/k3xq9a/tree/proj`,
      home: HOME,
      dataDir: data,
      extraWritable: [],
      tmpdir: '/var/folders/zz/abc/T/',
      platform: 'darwin',
    })
    expect(policy.tmpdir).toBe(`${data}/k3xq9a/tmp`)
    const {profile, parameters} = seatbelt(policy)
    expect(profile).toContain('(deny network-outbound (remote unix-socket))\n')
    expect(profile).toContain(
      '(allow network-outbound\n' +
        '  (remote unix-socket (subpath (param "TREE")))\n' +
        '  (remote unix-socket (subpath (param "TMPDIR")))\n' +
        '  (remote unix-socket (path-literal (param "SYSTEM_SOCKET_0")))\n' +
        '  (remote unix-socket (path-literal (param "SYSTEM_SOCKET_1"))))\n',
    )
    expect(parameters.filter(({name}) => name === 'TMPDIR')).toEqual([{name: 'TMPDIR', value: `${data}/k3xq9a/tmp`}])
    // Nor /tmp (tmux's and launchd's ssh-agent sockets), nor any other directory.
    expect(parameters.filter(({name}) => name.startsWith('SOCKET_DIR'))).toEqual([])
  })

  it("keeps the caches' program parts read-only, after the writable caches they lie in", () => {
    const names = rules(seatbelt(MAC).profile).map(summary)
    expect(
      names.indexOf('deny file-write* file-link: READ_ONLY_0 READ_ONLY_1 READ_ONLY_2 READ_ONLY_3 READ_ONLY_4 READ_ONLY_5 READ_ONLY_6 READ_ONLY_7'),
    ).toBeGreaterThan(names.findIndex(rule => rule.startsWith('allow file-write* file-link: WRITABLE_0')))
    const home = '/Users/me'
    const policy = buildPolicy({tree: `${DATA}/k3xq9a/tree/proj`, home, dataDir: DATA, extraWritable: [], platform: 'darwin'})
    // And git's credential cache's place (policy.ts CACHE_RENDEZVOUS), which Landlock makes plain-only.
    expect(policy.readOnly).toEqual([...PROGRAMS, '.cache/git'].map(p => `${home}/${p}`))
    // given by name with -w (or inside one), it is writable; a -w above it changes nothing
    expect(buildPolicy({tree: `${DATA}/t`, home, dataDir: DATA, extraWritable: [`${home}/.cargo/bin`, home], platform: 'darwin'}).readOnly).toEqual(
      [...PROGRAMS.slice(1), '.cache/git'].map(p => `${home}/${p}`),
    )
  })

  it('refuses TIOCSTI where Seatbelt can name it (macOS 13, Darwin 22, and later)', () => {
    expect(seatbelt(MAC, {tiocsti: true}).profile).toContain('(deny file-ioctl (ioctl-command TIOCSTI))\n')
    expect(seatbelt(MAC, {tiocsti: false}).profile).not.toContain('ioctl')
    expect(seatbeltKnowsTiocsti('darwin', '22.1.0')).toBe(true)
    expect(seatbeltKnowsTiocsti('darwin', '21.6.0')).toBe(false)
    expect(seatbeltKnowsTiocsti('linux', '6.18.0')).toBe(true) // rendered for a Mac from elsewhere
  })

  it('depends only on how many paths of each kind there are', () => {
    expect(seatbelt(MAC).profile).toBe(
      seatbeltProfile({writable: 9, readOnly: 8, ownTmp: true, systemSockets: 2, tiocsti: true, devices: 1, hidden: 5, hiddenAncestors: 5, treeAncestors: 3}),
    )
  })
})

describe('paths that would break SBPL if pasted into it', () => {
  // A double quote, a backslash, parentheses, a comment start, =, a newline,
  // spaces and non-ASCII: in the tree, a -w path, the home and the data directory.
  const ODD = 'we"i\\rd (pa)th; a=b x\ny ü'
  const plain = (name: string) => name
  const odd = (name: string) => `${name}${ODD}`

  function macPolicy(name: (base: string) => string): SandboxPolicy {
    // Paths under /Users, which does not exist on Linux and has no symbolic
    // link on a Mac: canonical() keeps them as given on either.
    const home = `/Users/${name('me')}`
    const data = `${home}/Library/Application Support/${name('hmm')}`
    return buildPolicy({
      tree: `${data}/k3xq9a/tree/${name('proj')}`,
      home,
      dataDir: data,
      extraWritable: [`/Users/${name('m2')}`],
      tmpdir: '/var/folders/zz/abc/T/',
      platform: 'darwin',
    })
  }

  it('leave the profile byte for byte the same and change only the -D values', () => {
    const before = seatbelt(macPolicy(plain))
    const after = seatbelt(macPolicy(odd))
    expect(after.profile).toBe(before.profile)
    expect(after.parameters.map(({name}) => name)).toEqual(before.parameters.map(({name}) => name))
    const home = `/Users/me${ODD}`
    const data = `${home}/Library/Application Support/hmm${ODD}`
    const args = seatbeltArgs(macPolicy(odd))
    const hiding = (arg: string) => arg.startsWith('-DHIDDEN_')
    expect(args.filter(arg => !hiding(arg))).toEqual([
      '-p',
      before.profile,
      `-DTREE=${data}/k3xq9a/tree/proj${ODD}`,
      `-DTMPDIR=${data}/k3xq9a/tmp`,
      '-DWRITABLE_0=/private/tmp',
      '-DWRITABLE_1=/private/var/folders',
      '-DWRITABLE_2=/private/var/folders/zz/abc/T',
      `-DWRITABLE_3=${home}/.cargo`,
      `-DWRITABLE_4=${home}/.rustup`,
      `-DWRITABLE_5=${home}/.cache`,
      `-DWRITABLE_6=${home}/.npm`,
      `-DWRITABLE_7=${home}/Library/Caches`,
      `-DWRITABLE_8=/Users/m2${ODD}`,
      `-DREAD_ONLY_0=${home}/.cargo/bin`,
      `-DREAD_ONLY_1=${home}/.cargo/env`,
      `-DREAD_ONLY_2=${home}/.cargo/env.fish`,
      `-DREAD_ONLY_3=${home}/.cargo/env.nu`,
      `-DREAD_ONLY_4=${home}/.cargo/config.toml`,
      `-DREAD_ONLY_5=${home}/.cargo/config`,
      `-DREAD_ONLY_6=${home}/.rustup/toolchains`,
      `-DREAD_ONLY_7=${home}/.npm/_npx`,
      `-DREAD_ONLY_8=${home}/.cache/git`,
      '-DDEVICE_0=/dev',
      `-DTREE_ANCESTOR_0=${data}`,
      `-DTREE_ANCESTOR_1=${data}/k3xq9a`,
      `-DTREE_ANCESTOR_2=${data}/k3xq9a/tree`,
      '-DSYSTEM_SOCKET_0=/private/var/run/mDNSResponder',
      '-DSYSTEM_SOCKET_1=/private/var/run/syslog',
    ])
    // The hidden paths under the odd home (the system's, /etc/..., are the machine's), each a parameter, in order.
    const values = (name: RegExp) => args.filter(arg => name.test(arg)).map(arg => arg.slice(arg.indexOf('=') + 1))
    expect(values(/^-DHIDDEN_\d+=/).filter(path => path.startsWith('/Users/'))).toEqual([...DEFAULT_SECRETS.map(secret => `${home}/${secret}`), data])
    const ancestors = values(/^-DHIDDEN_ANCESTOR_\d+=/).filter(path => path.startsWith('/Users'))
    for (const path of ['/Users', home, `${home}/.config`, `${home}/.local/share`, `${home}/Library/Application Support`]) expect(ancestors).toContain(path)
  })

  it('still give a profile of balanced s-expressions', () => {
    expect(() => parse(seatbelt(macPolicy(odd)).profile)).not.toThrow()
  })
})

describe('the policy as macOS resolves it', () => {
  const dirs: string[] = []
  afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, {recursive: true, force: true})))

  it('puts /tmp, /var and /etc under /private, from any machine', () => {
    expect(darwinPath('/tmp')).toBe('/private/tmp')
    expect(darwinPath('/tmp/x')).toBe('/private/tmp/x')
    expect(darwinPath('/var/folders/zz/abc/T')).toBe('/private/var/folders/zz/abc/T')
    expect(darwinPath('/etc/hosts')).toBe('/private/etc/hosts')
    expect(darwinPath('/private/tmp')).toBe('/private/tmp')
    expect(darwinPath('/tmpfoo')).toBe('/tmpfoo')
    expect(darwinPath('/Users/me/tmp')).toBe('/Users/me/tmp')
    expect(darwinPolicy(MAC).writable.slice(0, 3)).toEqual(['/private/tmp', '/private/var/folders', '/private/var/folders/zz/abc/T'])
  })

  it('gives every path of the policy (tree, writable, devices, hidden) as a parameter value, exactly', () => {
    mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
    const home = mkdtempSync(join(PROJECT, '.test-worlds', 'darwin-'))
    dirs.push(home)
    const data = join(home, 'Library', 'Application Support', 'hmm')
    const tree = join(data, 'k3xq9a', 'tree', 'proj')
    const extra = join(home, 'm2')
    mkdirSync(tree, {recursive: true})
    mkdirSync(extra)
    const policy = buildPolicy({tree, home, dataDir: data, extraWritable: [extra, '/var/tmp'], tmpdir: '/var/folders/zz/abc/T', platform: 'darwin'})
    const values = seatbelt(policy).parameters.map(({value}) => value)
    const expected = [policy.tree, ...policy.writable, ...policy.devices, ...policy.hidden].map(darwinPath)
    for (const path of expected) expect(values).toContain(path)
    expect(values).toContain('/private/var/folders/zz/abc/T')
    expect(values).toContain('/private/var/tmp')
    expect(values).toContain(darwinPath(join(home, '.ssh')))
  })

  it('lets a policy that limits reading fail loudly rather than render wrong', () => {
    expect(() => seatbelt({...MAC, readable: ['/usr']})).toThrow(/cannot limit reading/)
  })
})

describe('the sandbox-exec argv', () => {
  it('runs /usr/bin/sandbox-exec with the profile, the parameters, then the command untouched', () => {
    const command = ['claude', '--resume', '-n', 'x', 'a "quoted" arg; $(not run)']
    const argv = seatbeltArgv(MAC, command)
    expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec')
    expect(argv).toEqual([SANDBOX_EXEC, '-p', GOLDEN, ...MAC_PARAMETERS.map(definition => `-D${definition}`), '--', ...command])
  })
})

describe('the SBPL checker', () => {
  it('rejects what a pasted path could bring: stray quotes and parentheses, unknown escapes, regexes, newlines in strings', () => {
    expect(() => parse('(allow file-write* (subpath "/a"))')).not.toThrow()
    expect(() => parse('(allow file-write* (subpath "/a\\"b"))')).not.toThrow()
    expect(() => parse('(allow file-write* (subpath "/a")))')).toThrow(/closes nothing/)
    expect(() => parse('(allow file-write* (subpath "/a")')).toThrow(/left open/)
    expect(() => parse('(allow file-write* (subpath "/a"b"))')).toThrow(/runs into/)
    expect(() => parse('(allow file-write* (subpath "/a\\nb"))')).toThrow(/unknown escape/)
    expect(() => parse('(allow file-write* (subpath "/a\nb"))')).toThrow(/newline/)
    expect(() => parse('(allow file-write* (regex #"^/a"))')).toThrow(/unexpected/)
    expect(parse('; (unbalanced " in a comment\n(version 1)')).toEqual([
      {
        kind: 'list',
        items: [
          {kind: 'symbol', name: 'version'},
          {kind: 'symbol', name: '1'},
        ],
      },
    ])
  })
})
