// The composed home (SPEC "Sandbox" › Reading, issue 24): the command's home
// holds only what work needs — the places it writes, toolchains and what
// is on PATH, start-up files, `show` — so a secret no list names is not
// there to read: it is absent, as on a new machine. `home = "visible"`
// gives back the home less the listed secrets.
import {chmodSync, mkdirSync, readFileSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')

/** Files of the kinds no list names: a Docker client key, Kaggle's token, a document, a transcript. */
function plantUnlisted(): string[] {
  const rels = [
    '.docker/key.pem',
    '.kaggle/kaggle.json',
    'Documents/taxes.txt',
    '.local/share/goose/sessions/s.jsonl',
    '.ipython/profile_default/history.sqlite',
  ]
  for (const rel of rels) world.write(join(world.home, rel), `secret of ${rel}\n`)
  return rels
}

/** What `cat` of each path printed inside, one line each: the contents, or `absent`. */
const readEach = (rels: string[]) => [
  'sh',
  '-c',
  `for f in ${rels.map(rel => `"$HOME/${rel}"`).join(' ')}; do if [ -e "$f" ]; then cat "$f" 2>&1 || echo unreadable; else echo absent; fi; done`,
]

describe('the composed home', () => {
  it('has no file that no list names: a key, a token, a document, a transcript, a history are absent', async () => {
    world = new World('home-unlisted')
    const rels = plantUnlisted()
    const result = await world.hmm(['run', '--rm', ...readEach(rels)])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(rels.map(() => 'absent\n').join(''))
    // Not even their directories are there.
    const listed = await world.hmm(['run', '--rm', 'sh', '-c', 'ls -A "$HOME"'])
    expect(listed.stdout.split('\n')).not.toContain('Documents')
    expect(listed.stdout.split('\n')).not.toContain('.docker')
  })

  it('can be walked as a home outside can: find and grep -r meet no loop and no unreadable file of its own making', async () => {
    world = new World('home-walk')
    world.write(join(world.home, '.bashrc'), 'alias x=y\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'find "$HOME" -name nothing; echo "find $?"'])
    expect(result.stderr).not.toMatch(/loop/)
    expect(result.stdout).toBe('find 0\n')
  })

  it("has no other workspace's data, under an earlier data directory either", async () => {
    world = new World('home-old-data')
    const old = join(world.home, 'old-hmm')
    const first = await world.hmm(['run', '-n', 'old', 'sh', '-c', 'echo transcript > notes.txt'], {env: {...world.env, HMM_HOME: old}})
    expect(first.exitCode, first.stderr).toBe(0)
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'ls "$HOME/old-hmm" 2>&1 || echo absent'])
    expect(result.stdout).toBe(`ls: cannot access '${old}': No such file or directory\nabsent\n`)
  })

  it('holds start-up files and toolchains read-only, what is on PATH, and links of the user as they are', async () => {
    world = new World('home-kept')
    world.write(join(world.home, '.profile'), 'export FROM_PROFILE=1\n')
    world.write(join(world.home, 'dotfiles', 'bashrc'), 'alias ll="ls -l"\n')
    world.write(join(world.home, 'dotfiles', 'unrelated-secret'), 'not linked\n')
    symlinkSync(join(world.home, 'dotfiles', 'bashrc'), join(world.home, '.bashrc'))
    world.write(join(world.home, '.nvm', 'versions', 'node', 'v20', 'bin', 'fake-node'), '#!/bin/sh\necho fake node\n')
    chmodSync(join(world.home, '.nvm', 'versions', 'node', 'v20', 'bin', 'fake-node'), 0o755)
    // A program of the user's on PATH, and one linked into ~/.local/bin from where its installer keeps it.
    world.write(join(world.home, 'tools', 'bin', 'mine'), '#!/bin/sh\necho mine\n')
    chmodSync(join(world.home, 'tools', 'bin', 'mine'), 0o755)
    world.write(join(world.home, '.local', 'share', 'agentx', 'versions', '1', 'agentx'), '#!/bin/sh\necho agentx\n')
    chmodSync(join(world.home, '.local', 'share', 'agentx', 'versions', '1', 'agentx'), 0o755)
    mkdirSync(join(world.home, '.local', 'bin'), {recursive: true})
    symlinkSync(join(world.home, '.local', 'share', 'agentx', 'versions', '1', 'agentx'), join(world.home, '.local', 'bin', 'agentx'))
    const PATH = `${join(world.home, 'tools', 'bin')}:${join(world.home, '.local', 'bin')}:${world.env.PATH}`
    const script = [
      'cat "$HOME/.profile" "$HOME/.bashrc"',
      '"$HOME/.nvm/versions/node/v20/bin/fake-node"',
      'mine',
      'agentx',
      'cat "$HOME/dotfiles/unrelated-secret" 2>/dev/null || echo unrelated-absent',
      '(echo changed >> "$HOME/.profile") 2>/dev/null || echo profile-read-only',
      '(touch "$HOME/.nvm/new") 2>/dev/null || echo nvm-read-only',
      '(touch "$HOME/new") 2>/dev/null || echo home-read-only',
    ].join('; ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env: {...world.env, PATH}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      'export FROM_PROFILE=1\nalias ll="ls -l"\nfake node\nmine\nagentx\nunrelated-absent\nprofile-read-only\nnvm-read-only\nhome-read-only\n',
    )
  })

  it("holds what the user's git config includes and names, so git inside has the identity and ignores it has outside", async () => {
    world = new World('home-git-includes')
    world.write(join(world.home, '.gitconfig'), '[include]\n\tpath = ~/.config/identity.gitconfig\n[core]\n\texcludesFile = ~/dotfiles/ignore\n')
    world.write(join(world.home, '.config', 'identity.gitconfig'), '[user]\n\tname = Included\n\temail = included@example.com\n')
    world.write(join(world.home, 'dotfiles', 'ignore'), '*.log\n')
    world.write(join(world.home, 'dotfiles', 'private'), 'private notes\n')
    const script =
      'git init -q r && cd r && touch a.log && git config user.email && git check-ignore a.log; cat ~/dotfiles/private 2>/dev/null || echo private-absent'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('included@example.com\na.log\nprivate-absent\n')
  })

  it('follows no link of the home to a folder: one an earlier run planted where it could write shows the next run nothing', async () => {
    world = new World('home-planted-links')
    plantUnlisted()
    world.write(join(world.home, 'dotfiles', 'zshrc'), 'setopt x\n')
    world.write(join(world.home, 'dotfiles', 'private'), 'private notes\n')
    symlinkSync(join(world.home, 'dotfiles', 'zshrc'), join(world.home, '.zshrc'))
    mkdirSync(join(world.home, '.emacs.d'))
    mkdirSync(join(world.home, '.cabal'))
    const plant = await world.hmm([
      'run',
      '--rm',
      '-w',
      join(world.home, '.emacs.d'),
      '-w',
      join(world.home, '.cabal'),
      'sh',
      '-c',
      'ln -s ../Documents ~/.emacs.d/init.el && ln -s ../dotfiles ~/.cabal/bin',
    ])
    expect(plant.exitCode, plant.stderr).toBe(0)
    // The home itself on PATH: its links are not followed to their folders either.
    const script = 'ls ~/Documents 2>&1 || true; cat ~/.emacs.d/init.el/taxes.txt 2>&1 || true; cat ~/dotfiles/private 2>&1 || true; cat ~/.zshrc'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env: {...world.env, PATH: `${world.home}:${world.env.PATH}`}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('secret of')
    expect(result.stdout).not.toContain('private notes')
    expect(result.stdout).toMatch(/setopt x\n$/)
  })

  it("shows what the config file's show names, read-only, and what -w names, writable", async () => {
    world = new World('home-show')
    plantUnlisted()
    world.write(join(world.home, 'shared', 'data.csv'), 'a,b\n')
    world.write(configFile(), 'show = ["~/Documents"]\n')
    const script = `cat "$HOME/Documents/taxes.txt"; (echo x >> "$HOME/Documents/taxes.txt") 2>/dev/null || echo read-only; echo more >> "$HOME/shared/data.csv" && cat "$HOME/shared/data.csv"; cat "$HOME/.docker/key.pem" 2>/dev/null || echo absent`
    const result = await world.hmm(['run', '--rm', '-w', join(world.home, 'shared'), 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('secret of Documents/taxes.txt\nread-only\na,b\nmore\nabsent\n')
  })

  it("holds npm's config without its logins: npm reads its settings as outside, no token is there", async () => {
    world = new World('home-npmrc')
    const nodedir = join(world.root, 'node-headers')
    // A profile switcher's link (npmrc), and the ways npm's ini reads a key: quoted, as a list.
    world.write(
      join(world.home, '.npmrcs', 'work'),
      `nodedir=${nodedir}\nsave-exact=true\n//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n_auth=c2VjcmV0\n//r.example/:_password=c2VjcmV0\n` +
        `"_auth" = c2VjcmV0\n'//r.example/:_password' = c2VjcmV0\n_auth[] = c2VjcmV0\nkey = "-----BEGIN PRIVATE KEY-----\\nc2VjcmV0"\n`,
    )
    symlinkSync(join(world.home, '.npmrcs', 'work'), join(world.home, '.npmrc'))
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'npm config get nodedir; npm config get save-exact; cat "$HOME/.npmrc"'])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${nodedir}\ntrue\nnodedir=${nodedir}\nsave-exact=true\n`)
  })

  it('holds start-up files without the lines that set a credential: the rest reads as outside, no key is there', async () => {
    world = new World('home-startup-secrets')
    const bashrc = world.write(
      join(world.home, '.bashrc'),
      "alias ll='ls -l'\nexport EDITOR=vim\nexport OPENAI_API_KEY=sk-proj-SECRETbashrc0123456789abcdef\n" +
        'export DATABASE_URL=postgres://me:SECRETpass@db.example/app\nNOTIFY="https://hooks.slack.com/services/T0/B0/SECRETslack"\n',
    )
    world.write(join(world.home, '.config', 'fish', 'conf.d', 'keys.fish'), 'set -gx PAGER less\nset -gx ANTHROPIC_API_KEY SECRETfish\n')
    // nvm's node: npm reads its prefix's etc/npmrc too (a token `npm config set -g` put there).
    const prefix = join(world.home, '.nvm', 'versions', 'node', 'v20.0.0')
    world.write(join(prefix, 'bin', 'tool'), '#!/bin/sh\n')
    chmodSync(join(prefix, 'bin', 'tool'), 0o755)
    world.write(join(prefix, 'etc', 'npmrc'), 'color=false\n//registry.npmjs.org/:_authToken=npm_SECRETglobal\n')
    const env = {...world.env, PATH: `${join(prefix, 'bin')}:${world.env.PATH}`}
    const script = [
      'cat ~/.bashrc ~/.config/fish/conf.d/keys.fish ~/.nvm/versions/node/v20.0.0/etc/npmrc',
      't=SECRET',
      'grep -rl -D skip "$t" "$HOME" /tmp 2>/dev/null',
      'echo "grep: $?"',
    ].join('\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      "alias ll='ls -l'\nexport EDITOR=vim\n# hmm: a line that sets OPENAI_API_KEY, left out\n# hmm: a line that sets DATABASE_URL, left out\n" +
        '# hmm: a line that sets NOTIFY, left out\nset -gx PAGER less\n# hmm: a line that sets ANTHROPIC_API_KEY, left out\n' +
        'color=false\ngrep: 1\n',
    )
    expect(readFileSync(bashrc, 'utf8')).toContain('SECRETbashrc')
  })

  it('is the whole home less the listed secrets with home = "visible"', async () => {
    world = new World('home-visible')
    const rels = plantUnlisted()
    world.plantSecrets()
    world.write(configFile(), 'home = "visible"\n')
    const result = await world.hmm(['run', '--rm', ...readEach([...rels, '.ssh/id_rsa'])])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe([...rels.map(rel => `secret of ${rel}\n`), 'absent\n'].join(''))
  })

  it('is printed by hmm sandbox, each entry with where it comes from', async () => {
    world = new World('home-sandbox')
    world.write(join(world.home, '.bashrc'), '\n')
    mkdirSync(join(world.home, '.nvm'))
    const shown = await world.hmm(['sandbox'])
    expect(shown.exitCode, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('home (composed: nothing else of ~ is there; home = "visible" in the config file shows the rest):\n')
    expect(shown.stdout).toContain('  ~/.bashrc (start-up file, read-only)\n')
    expect(shown.stdout).toContain('  ~/.nvm (toolchain, read-only)\n')
    expect(shown.stdout).toContain('  ~/.cache (a layer of the workspace over yours)\n')
  })
})

describe('the cache layers', () => {
  it('behave as directories: what the real cache holds can be removed, renamed and rewritten inside, the real cache unchanged', async () => {
    world = new World('home-cache-layers')
    world.write(join(world.home, '.npm', '_cacache', 'index-v5', 'ab', 'entry'), 'cached\n')
    world.write(join(world.home, '.npm', '_logs', 'old.log'), 'log\n')
    world.write(join(world.home, '.cache', 'tool', 'data'), 'old\n')
    const script = [
      'rm -rf ~/.npm/_cacache',
      'mv ~/.npm/_logs ~/.npm/logs-moved',
      'echo new > ~/.cache/tool/data',
      'rm -r ~/.cache/tool && mkdir ~/.cache/tool && echo again > ~/.cache/tool/data',
      'ls -A ~/.npm',
      'cat ~/.cache/tool/data',
      'npm cache clean --force && echo cleaned',
    ].join(' && ')
    const result = await world.hmm(['run', '-n', 'c', 'sh', '-c', script])
    expect(result.stderr).not.toMatch(/Input\/output error|EIO/)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('logs-moved\nagain\ncleaned\n')
    // The next command in the workspace sees the same; the user's cache is as it was.
    const again = await world.hmm([
      'exec',
      'c',
      'sh',
      '-c',
      'test -e ~/.npm/_cacache || echo no-cacache; test -d ~/.npm/logs-moved && echo moved; cat ~/.cache/tool/data',
    ])
    expect(again.stdout).toBe('no-cacache\nmoved\nagain\n')
    expect(readFileSync(join(world.home, '.npm', '_cacache', 'index-v5', 'ab', 'entry'), 'utf8')).toBe('cached\n')
    expect(readFileSync(join(world.home, '.npm', '_logs', 'old.log'), 'utf8')).toBe('log\n')
    expect(readFileSync(join(world.home, '.cache', 'tool', 'data'), 'utf8')).toBe('old\n')
  })
})
