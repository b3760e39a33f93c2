// The composed home without the namespaces (isolation = "landlock-only", and
// macOS's Seatbelt): no mount namespace to build a home of its own, so the
// same view is made of rules: of the home only the places sandbox/home.ts
// keeps are readable, the rest is there but unreadable (Landlock gives
// EACCES, never ENOENT), and the cleaned copies are reached through the
// variables that name a tool's config file, the originals unreadable.
import {chmodSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {execaSync} from 'execa'
import {afterEach, describe, expect, it} from 'vitest'
import {asOnMacOS, MOVED_ON_MACOS, shellQuote, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')
const landlockOnly = (more = '') => world.write(configFile(), `isolation = "landlock-only"\n${more}`)

/** What `cat` of each path printed inside, one line each: its contents, or `unreadable`. */
const readEach = (rels: string[]) => `for f in ${rels.map(rel => `"$HOME/${rel}"`).join(' ')}; do cat "$f" 2>/dev/null || echo "unreadable $f"; done`

/** Names each file of the home the command can read that holds the token (spelled whole only outside), then `searched`. */
const grepSecret = 't=SECRET; grep -rl -D skip "$t" "$HOME" 2>/dev/null | sed "s/^/leak: /"; echo searched'

describe('the composed home under landlock-only', () => {
  it('reads no file of the home that no list names: a key, a document, an old data directory are unreadable', async () => {
    world = new World('home-ll-unlisted')
    landlockOnly()
    const rels = ['.kaggle/kaggle.json', 'Documents/taxes.txt', '.docker/key.pem']
    for (const rel of rels) world.write(join(world.home, rel), `secret of ${rel}\n`)
    const old = join(world.home, 'old-hmm')
    const first = await world.hmm(['run', '-n', 'old', 'sh', '-c', 'echo transcript > notes.txt'], {env: {...world.env, HMM_HOME: old}})
    expect(first.exitCode, first.stderr).toBe(0)
    const script = `${readEach(rels)}; find "$HOME/old-hmm" -name notes.txt | while IFS= read -r f; do echo found; cat "$f" 2>/dev/null || echo unreadable-old; done`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe([...rels.map(rel => `unreadable ${world.home}/${rel}\n`), 'found\nunreadable-old\n'].join(''))
  })

  it('follows no link an earlier run planted on PATH to a file of the home', async () => {
    world = new World('home-ll-planted')
    landlockOnly()
    world.write(join(world.home, 'Documents', 'taxes.txt'), 'secret of taxes\n')
    const bin = join(world.home, '.local', 'bin')
    mkdirSync(bin, {recursive: true})
    const plant = await world.hmm(['run', '--rm', '-w', bin, 'sh', '-c', `ln -s ../../Documents/taxes.txt ${shellQuote(join(bin, 'taxes'))}`])
    expect(plant.exitCode, plant.stderr).toBe(0)
    const env = {...world.env, PATH: `${bin}:${world.env.PATH}`}
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `cat ${shellQuote(join(bin, 'taxes'))} 2>/dev/null; echo done`], {env})
    expect(result.stdout, result.stderr).toBe('done\n')
  })

  it('reads toolchains, start-up files without secrets and what show names; tools work', async () => {
    world = new World('home-ll-kept')
    landlockOnly('show = ["~/Documents"]\n')
    world.write(join(world.home, 'Documents', 'notes.txt'), 'shown\n')
    world.write(join(world.home, '.bashrc'), 'export FROM_BASHRC=yes\n')
    const tool = world.write(join(world.home, '.nvm', 'versions', 'node', 'v20', 'bin', 'fake-node'), '#!/bin/sh\necho fake node\n')
    chmodSync(tool, 0o755)
    // Go's module cache, a layer with the namespaces, is read where it lies.
    world.write(join(world.home, 'go', 'pkg', 'mod', 'example.com', 'm@v1.0.0', 'm.go'), 'package m\n')
    const script = [
      'cat ~/Documents/notes.txt',
      '"$HOME/.nvm/versions/node/v20/bin/fake-node"',
      'cat ~/go/pkg/mod/example.com/m@v1.0.0/m.go',
      'bash -ic \'echo "bashrc: $FROM_BASHRC"\' 2>/dev/null',
      'python3 -c "print(6 * 7)"',
      'npm --version >/dev/null && echo npm',
      '(echo x >> ~/Documents/notes.txt) 2>/dev/null || echo read-only',
    ].join('; ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('shown\nfake node\npackage m\nbashrc: yes\n42\nnpm\nread-only\n')
  })

  it("gives git, npm and pip their settings through copies without the credentials; the user's files are unreadable", async () => {
    world = new World('home-ll-copies')
    const pip = execaSync('/usr/bin/python3', ['-m', 'pip', '--version'], {reject: false}).exitCode === 0
    await world.gitRepo()
    landlockOnly()
    const nodedir = join(world.root, 'node-headers')
    world.write(
      join(world.home, '.gitconfig'),
      `[user]\n\tname = Copied Name\n\temail = copied@example.com\n[http "https://github.com/"]\n\textraHeader = AUTHORIZATION: basic SECRETgit\n`,
    )
    world.write(join(world.home, '.config', 'git', 'config'), '[alias]\n\tst = status\n')
    world.write(join(world.home, '.npmrc'), `nodedir=${nodedir}\n//registry.npmjs.org/:_authToken=npm_SECRETnpm\n`)
    world.write(join(world.home, '.config', 'pip', 'pip.conf'), '[global]\ntimeout = 61\nindex-url = https://me:SECRETpip@pypi.work.example/simple\n')
    world.write(join(world.home, '.bashrc'), 'alias ll="ls -l"\nexport GITHUB_TOKEN=ghp_SECRETbashrc0123456789abcdefghijklmnop\n')
    const script = [
      'git config user.name',
      'git config --get-all http.https://github.com/.extraheader || echo no-header',
      'git config alias.st',
      'git commit -q --allow-empty -m inside && git log -1 --format=%an',
      'npm config get nodedir',
      // pip where the machine has it (the test is not about pip's presence).
      `${pip ? '/usr/bin/python3 -m pip config list | grep ^global.timeout' : "echo global.timeout=\\'61\\'"}`,
      'for f in .gitconfig .npmrc .bashrc .config/pip/pip.conf; do cat ~/$f >/dev/null 2>&1 || echo "unreadable $f"; done',
      grepSecret,
    ].join('; ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      `Copied Name\nno-header\nstatus\nCopied Name\n${nodedir}\nglobal.timeout='61'\n` +
        'unreadable .gitconfig\nunreadable .npmrc\nunreadable .bashrc\nunreadable .config/pip/pip.conf\nsearched\n',
    )
  })

  it('is the whole home less the listed secrets with home = "visible"', async () => {
    world = new World('home-ll-visible')
    landlockOnly('home = "visible"\n')
    world.write(join(world.home, 'Documents', 'taxes.txt'), 'visible\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', readEach(['Documents/taxes.txt'])])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('visible\n')
  })

  it('is printed by hmm sandbox, with what differs from the namespaces, and given to Landlock as the home hidden, its places read', async () => {
    world = new World('home-ll-sandbox')
    landlockOnly()
    world.write(join(world.home, '.bashrc'), '\n')
    mkdirSync(join(world.home, '.nvm'))
    const shown = await world.hmm(['sandbox'])
    expect(shown.exitCode, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(
      'home (composed by Landlock rules: the rest of ~ is there but unreadable, EACCES, its names listable; home = "visible" in the config file shows the rest):\n',
    )
    expect(shown.stdout).toContain('  ~/.bashrc (start-up file, read-only)\n')
    expect(shown.stdout).toContain('  ~/.nvm (toolchain, read-only)\n')
    expect(shown.stdout).toContain('  ~/.cache (written in place)\n')
    expect(shown.stdout).toMatch(/unlike with the namespaces: .*GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, NPM_CONFIG_USERCONFIG, PIP_CONFIG_FILE/)
    expect(shown.stdout).toContain(` --hide ${shellQuote(world.home)} `)
    expect(shown.stdout).toContain(` --read ${shellQuote(join(world.home, '.nvm'))} `)
  })
})

describe('the composed home on macOS (Seatbelt)', () => {
  it.skipIf(MOVED_ON_MACOS)('denies reading the home, then allows its places back, before the secrets are denied', async () => {
    world = new World('home-mac')
    landlockOnly()
    mkdirSync(join(world.home, '.nvm'))
    const shown = await world.hmm(['sandbox', '--platform', 'darwin'])
    expect(shown.exitCode, shown.stderr).toBe(0)
    const home = asOnMacOS(world.home)
    expect(shown.stdout).toContain(`  ${shellQuote(`COMPOSED_HOME=${home}`)}\n`)
    const n = /HOME_KEPT_(\d+)=[^\n]*\/\.nvm'?\n/.exec(shown.stdout)?.[1]
    expect(shown.stdout).toContain(`  ${shellQuote(`HOME_KEPT_${n}=${home}/.nvm`)}\n`)
    const profile = shown.stdout.slice(shown.stdout.indexOf('PROFILE:'))
    const denied = profile.indexOf('(deny file-read-data file-read-xattr process-exec\n    (subpath (param "COMPOSED_HOME")))')
    const kept = profile.indexOf('(allow file-read-data file-read-xattr process-exec\n    (subpath (param "HOME_KEPT_0"))')
    const hidden = profile.indexOf('(deny file-read* file-write* file-link file-clone process-exec')
    expect(denied).toBeGreaterThan(0)
    expect(kept).toBeGreaterThan(denied)
    expect(hidden).toBeGreaterThan(kept)
    expect(shown.stdout).toContain('home (composed by Seatbelt rules')
  })
})
