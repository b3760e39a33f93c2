import {mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {landlockArgs} from '../../src/platform/linux.js'
import {sandboxedArgv} from '../../src/platform/confine.js'
import {darwinPath, seatbelt, seatbeltArgv} from '../../src/platform/darwin.js'
import {agentBinds, agentPlaces} from '../../src/app/agent-places.js'
import {parseConfig, settingsFor} from '../../src/sandbox/config.js'
import {canonical} from '../../src/sandbox/paths.js'
import {buildPolicy, hostKeys, withBinds} from '../../src/sandbox/policy.js'
import {scratchDir} from '../world.js'

function scratch(): string {
  return scratchDir('policy')
}

describe('the sandbox policy', () => {
  it('lets the command write the tree, temp, caches, devices and -w paths, and hides secrets and the data directory', () => {
    const home = scratch()
    const extra = join(home, 'm2')
    mkdirSync(extra)
    const policy = buildPolicy({
      tree: join(home, 'data/ab/tree/p'),
      home,
      dataDir: join(home, 'data'),
      extraWritable: [extra],
      tmpdir: '/tmp',
      platform: 'linux',
    })
    expect(policy.readable).toEqual(['/'])
    expect(policy.tree).toBe(join(home, 'data/ab/tree/p'))
    expect(policy.writable).toEqual(['/tmp', ...['.cargo', '.rustup', '.cache', '.npm'].map(c => join(home, c)), extra])
    // Linux: the names of the command's own /dev only (native-helpers/devices.c), never all of /dev.
    expect(policy.devices).toEqual([
      '/dev/null',
      '/dev/zero',
      '/dev/full',
      '/dev/random',
      '/dev/urandom',
      '/dev/tty',
      '/dev/ptmx',
      '/dev/pts',
      '/dev/shm',
      '/dev/mqueue',
    ])
    for (const secret of [
      '.ssh',
      '.aws',
      '.gnupg',
      '.config/gh',
      '.netrc',
      '.git-credentials',
      '.npmrc',
      '.docker/config.json',
      '.kube',
      '.config/gcloud',
      '.bash_history',
      '.local/share/keyrings',
    ]) {
      expect(policy.hidden).toContain(join(home, secret))
    }
    expect(policy.hidden).toEqual(expect.arrayContaining(['/etc/shadow', '/etc/gshadow', join(home, 'data'), '/dev']))
    // SPEC's list: about thirty paths in the home directory.
    expect(policy.hidden.filter(path => path.startsWith(home + '/')).length).toBeGreaterThanOrEqual(30)
  })

  it("never lets a $TMPDIR or cache that holds the home or hmm's data directory be written; the command's $TMPDIR is then /tmp (on macOS the workspace's own)", () => {
    const home = scratch()
    for (const platform of ['linux', 'darwin'] as const) {
      const input = {tree: join(home, 'data/ab/tree/p'), home, extraWritable: [], platform}
      // macOS gives every command the workspace's own temp directory as $TMPDIR (its sockets may be there alone).
      const given = (linux: string | undefined) => (platform === 'darwin' ? join(home, 'data/ab/tmp') : linux)
      const inHome = buildPolicy({...input, dataDir: join(home, 'data'), tmpdir: home})
      expect(inHome.writable).not.toContain(home)
      expect(inHome.tmpdir).toBe(given('/tmp'))
      const holdsData = buildPolicy({...input, dataDir: join(home, '.cache/hmm'), tmpdir: join(home, '.cache')})
      expect(holdsData.writable).not.toContain(join(home, '.cache'))
      expect(holdsData.isolation?.caches ?? []).not.toContain(join(home, '.cache'))
      expect(holdsData.tmpdir).toBe(given('/tmp'))
      // An ordinary $TMPDIR is the command's own, as it is (on macOS still writable, but not where its sockets may be).
      // Not /var/tmp: a checkout there would hold the home, and rightly not be writable.
      const ordinary = buildPolicy({...input, dataDir: join(home, 'data'), tmpdir: '/opt/hmm-test-tmpdir'})
      expect(ordinary.writable).toContain('/opt/hmm-test-tmpdir')
      expect(ordinary.tmpdir).toBe(given(undefined))
    }
  })

  it("keeps the caches' program parts read-only only where the caches are written in place: opted out of namespaces, or on macOS", () => {
    const home = scratch()
    const programs = [
      '.cargo/bin',
      '.cargo/env',
      '.cargo/env.fish',
      '.cargo/env.nu',
      '.cargo/config.toml',
      '.cargo/config',
      '.rustup/toolchains',
      '.npm/_npx',
    ].map(rel => join(home, rel))
    const input = {tree: join(home, 'data/ab/tree/p'), home, dataDir: join(home, 'data'), extraWritable: [], tmpdir: '/tmp'}
    const rendezvous = [join(home, '.cache/git')]
    expect(buildPolicy({...input, platform: 'linux'})).toMatchObject({readOnly: programs, plainOnly: rendezvous})
    expect(buildPolicy({...input, platform: 'darwin'})).toMatchObject({readOnly: [...programs, ...rendezvous], plainOnly: []})
    expect(buildPolicy({...input, platform: 'linux', namespaces: true})).toMatchObject({readOnly: [], plainOnly: []})
    expect(buildPolicy({...input, platform: 'darwin', namespaces: true})).toMatchObject({readOnly: [...programs, ...rendezvous], plainOnly: []})
    // Given by name with -w, it is writable whole; a -w above it changes nothing.
    expect(buildPolicy({...input, platform: 'linux', extraWritable: [join(home, '.cache/git')]}).plainOnly).toEqual([])
    expect(buildPolicy({...input, platform: 'linux', extraWritable: [join(home, '.cache')]}).plainOnly).toEqual(rendezvous)
  })

  it("writes only an agent's sessions, records and login on macOS and without namespaces; with them, keeps its directory and state apart", () => {
    const home = scratch()
    const root = join(home, 'data', 'ab')
    const settings = settingsFor(parseConfig('', join(home, 'config.toml'), home), ['claude'], {})
    const input = {tree: join(root, 'tree', 'p'), home, dataDir: join(home, 'data')}
    for (const [platform, workspace] of [
      ['darwin', root],
      ['linux', undefined],
    ] as const) {
      const {writable, ...places} = agentPlaces(settings, platform, workspace !== undefined)
      const policy = buildPolicy({...input, platform, extraWritable: writable, ...places})
      const own = ['projects', 'history.jsonl', '.credentials.json'].map(rel => join(home, '.claude', rel))
      expect(policy.writable).toEqual(expect.arrayContaining([...own, join(home, '.claude.json')]))
      expect(policy.writable).not.toContain(join(home, '.claude'))
      if (platform === 'darwin') {
        // As macOS names it (a checkout under /var/tmp is /private/var/tmp there).
        const value = darwinPath(join(home, '.claude', 'projects'))
        expect(seatbelt(policy).parameters.find(parameter => parameter.value === value)?.name).toMatch(/^WRITABLE_/)
      }
    }
    writeFileSync(join(home, '.claude.json'), '{"n":1}\n')
    const {writable, ...places} = agentPlaces(settings, 'linux', true)
    const isolated = withBinds(buildPolicy({...input, platform: 'linux', extraWritable: writable, ...places}), agentBinds(settings, root, input.tree))
    expect(isolated.isolation?.caches).toContain(join(home, '.claude'))
    expect(isolated.isolation?.binds).toEqual([{source: join(root, 'agent-state', '.claude.json'), target: join(home, '.claude.json')}])
    expect(JSON.parse(readFileSync(join(root, 'agent-state', '.claude.json'), 'utf8'))).toEqual({n: 1})
  })

  it("hides the config file's hide paths and gives back its unhide paths, never the data directory", () => {
    const home = scratch()
    const policy = buildPolicy({
      tree: join(home, 'data/ab/tree/p'),
      home,
      dataDir: join(home, 'data'),
      extraWritable: [],
      platform: 'linux',
      hide: [join(home, 'work/.env')],
      unhide: [join(home, '.npmrc'), join(home, 'data')],
    })
    expect(policy.hidden).toContain(join(home, 'work/.env'))
    expect(policy.hidden).not.toContain(join(home, '.npmrc'))
    expect(policy.hidden).toContain(join(home, 'data'))
  })

  it('expands /etc/ssh/*_key when the policy is made', () => {
    const etcSsh = scratch()
    for (const name of ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'ssh_host_rsa_key', 'sshd_config']) writeFileSync(join(etcSsh, name), '')
    expect(hostKeys(etcSsh)).toEqual([join(etcSsh, 'ssh_host_ed25519_key'), join(etcSsh, 'ssh_host_rsa_key')])
    expect(hostKeys(join(etcSsh, 'missing'))).toEqual([])
  })

  it('hides where a symlinked secret leads as well as the link', () => {
    const home = scratch()
    mkdirSync(join(home, 'keys'))
    symlinkSync(join(home, 'keys'), join(home, '.ssh'))
    const policy = buildPolicy({tree: join(home, 't'), home, dataDir: join(home, 'd'), extraWritable: [], platform: 'linux'})
    expect(policy.hidden).toContain(join(home, '.ssh'))
    expect(policy.hidden).toContain(join(home, 'keys'))
  })

  it('canonicalises paths that do not exist yet through their existing parents', () => {
    const home = scratch()
    mkdirSync(join(home, 'real'))
    symlinkSync(join(home, 'real'), join(home, 'link'))
    expect(canonical(join(home, 'link', 'not', 'yet'))).toBe(join(home, 'real', 'not', 'yet'))
  })

  it('becomes the helper argv with the policy only in arguments', () => {
    const policy = {
      tree: '/d/x/tree/p',
      readable: ['/'],
      writable: ['/tmp'],
      readOnly: ['/h/.cargo/bin'],
      plainOnly: ['/h/.cache/git'],
      devices: ['/dev'],
      hidden: ['/h/.ssh', '/d'],
    }
    // prettier-ignore
    expect(landlockArgs(policy)).toEqual(['--read', '/', '--write', '/tmp', '--write', '/d/x/tree/p', '--dev', '/dev', '--hide', '/h/.ssh', '--hide', '/d', '--read-only', '/h/.cargo/bin', '--plain-only', '/h/.cache/git'])
    const control = {lock: '/d/x/lock', reportFd: 3, waitFd: 4, chdir: '/d/x/tree/p'}
    const controlArgs = ['exec', '--lock', '/d/x/lock', '--report-fd', '3', '--wait-fd', '4', '--chdir', '/d/x/tree/p']
    expect(sandboxedArgv('linux', policy, control, ['claude', '--resume'])).toEqual([...controlArgs, ...landlockArgs(policy), '--', 'claude', '--resume'])
    // macOS: no Landlock rules; the helper execs sandbox-exec, which execs the command.
    expect(sandboxedArgv('darwin', policy, control, ['claude'])).toEqual([...controlArgs, '--', ...seatbeltArgv(policy, ['claude'])])
  })
})
