// The composed home (SPEC "Sandbox" › Reading, issue 24): the command's home
// holds only what work needs — the places it writes, toolchains and what
// is on PATH, start-up files, `show` — so a secret no list names is not
// there to read: it is absent, as on a new machine. `home = "visible"`
// gives back the home less the listed secrets.
import {chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {execaSync} from 'execa'
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

/** An earlier run, granted these places of the home, that ran `script` there (links it planted, say). */
async function earlierRun(places: string[], script: string): Promise<void> {
  const plant = await world.hmm(['run', '--rm', ...places.flatMap(place => ['-w', join(world.home, place)]), 'sh', '-c', script])
  expect(plant.exitCode, plant.stderr).toBe(0)
}

/** Prints `grep: 1` when no file of the home or /tmp holds a token (spelled whole only in the files planted outside). */
const grepSecret = 't=SECRET; grep -rl -D skip "$t" "$HOME" /tmp 2>/dev/null; echo "grep: $?"'

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
    world.write(join(world.home, '.local', 'share', 'cursor-agent', 'versions', '1', 'cursor-agent'), '#!/bin/sh\necho agentx\n')
    chmodSync(join(world.home, '.local', 'share', 'cursor-agent', 'versions', '1', 'cursor-agent'), 0o755)
    mkdirSync(join(world.home, '.local', 'bin'), {recursive: true})
    symlinkSync(join(world.home, '.local', 'share', 'cursor-agent', 'versions', '1', 'cursor-agent'), join(world.home, '.local', 'bin', 'agentx'))
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

  it("holds of the shells' and editors' start-up directories only what they read at start: undo, swap and backup files, viminfo, a history there are absent", async () => {
    world = new World('home-startup-dirs')
    const kept = {
      '.vim/vimrc': 'set undodir=~/.vim/undodir\n',
      '.vim/plugin/mine.vim': 'let g:mine = 1\n',
      '.vim/pack/p/start/x/plugin/x.vim': 'let g:x = 1\n',
      '.config/nvim/init.lua': 'vim.opt.number = true\n',
      '.config/nvim/lua/mine/init.lua': 'return {}\n',
      '.config/zsh/.zshrc': 'HISTFILE=$ZDOTDIR/history\n',
      '.config/zsh/aliases.zsh': 'alias g=git\n',
      '.oh-my-zsh/oh-my-zsh.sh': 'ZSH_CACHE_DIR=$ZSH/cache\n',
      '.oh-my-zsh/custom/mine.zsh': 'alias m=make\n',
      '.config/fish/conf.d/mine.fish': 'set -g x 1\n',
    }
    const absent = [
      '.vim/undodir/%home%me%projects%other%.env',
      '.vim/backup/.env~',
      '.vim/swap/%home%me%projects%other%.env.swp',
      '.vim/viminfo',
      '.vim/.netrwhist',
      '.vim/sessions/work.vim',
      '.config/nvim/undo/%home%me%.aws%config',
      '.config/zsh/history',
      '.config/zsh/.zcompdump',
      '.oh-my-zsh/cache/last-working-dir',
      '.oh-my-zsh/log/update.log',
      '.config/fish/conf.d/notes.txt',
    ]
    for (const [rel, text] of Object.entries(kept)) world.write(join(world.home, rel), text)
    for (const rel of absent) world.write(join(world.home, rel), `SECRET of ${rel}\n`)
    // What is kept is cleaned as before; a link there is kept as any link of the home: to a file of its name, never a folder.
    world.write(join(world.home, '.vim', 'plugin', 'ai.vim'), 'let g:codeium_api_key = "SECRETvimplugin"\n')
    world.write(join(world.home, 'dotfiles', 'gvimrc'), 'set guifont=Mono\n')
    symlinkSync(join(world.home, 'dotfiles', 'gvimrc'), join(world.home, '.vim', 'gvimrc'))
    world.write(join(world.home, 'Documents', 'taxes.vim'), 'SECRET of taxes\n')
    symlinkSync(join(world.home, 'Documents'), join(world.home, '.vim', 'after'))
    const script = `${readEach([...Object.keys(kept), '.vim/plugin/ai.vim', '.vim/gvimrc', '.vim/after/taxes.vim']).at(-1)}; ${grepSecret}`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${Object.values(kept).join('')}" hmm: a line that holds a credential, left out\nset guifont=Mono\nabsent\ngrep: 1\n`)
    // hmm sandbox names what is there, not the whole directory.
    const shown = await world.hmm(['sandbox'])
    expect(shown.stdout).toContain('  ~/.vim/plugin (start-up file, read-only)\n')
    expect(shown.stdout).not.toMatch(/~\/\.vim \(/)
  })

  it("cleans every editor's start-up file the home keeps: ~/.vim's vimrc and Lua, Lua deep in nvim's lua/", async () => {
    // The attacker's review 26, F3: these were kept as they were, keys and all.
    world = new World('home-editor-keys')
    const files = ['.vim/vimrc', '.vim/gvimrc', '.vim/lua/ai.lua', '.config/nvim/lua/me/plugins/ai/providers/openai.lua']
    for (const rel of files) world.write(join(world.home, rel), `api_key = "SECRETkey${rel.length}abcdef"\nok = 1\n`)
    // A plugin manager's tree is others' code: the user's own files are read first, within the bound.
    for (let at = 0; at < 600; at++) world.write(join(world.home, '.vim', 'plugged', `p${at}`, 'plugin', 'p.vim'), 'let g:p = 1\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `cat ${files.map(rel => `~/${rel}`).join(' ')}; ${grepSecret}`])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      ['"', '"', '--', '--'].map(comment => `${comment} hmm: a line that holds a credential, left out\nok = 1\n`).join('') + 'grep: 1\n',
    )
  })

  it("holds of ~/go its programs and its module cache, not GOPATH's projects: other projects are absent", async () => {
    world = new World('home-gopath')
    chmodSync(world.write(join(world.home, 'go', 'bin', 'gotool'), '#!/bin/sh\necho gotool\n'), 0o755)
    world.write(join(world.home, 'go', 'pkg', 'mod', 'example.com', 'm@v1.0.0', 'm.go'), 'package m\n')
    world.write(join(world.home, 'go', 'src', 'github.com', 'acme', 'billing', 'main.go'), 'package billing // SECRET of billing\n')
    world.write(join(world.home, 'go', 'src', 'github.com', 'acme', 'billing', '.env'), 'STRIPE_KEY=SECRET\n')
    const script = `~/go/bin/gotool; cat ~/go/pkg/mod/example.com/m@v1.0.0/m.go; ls ~/go/src 2>/dev/null || echo src-absent; ${grepSecret}`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('gotool\npackage m\nsrc-absent\ngrep: 1\n')
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
    await earlierRun(['.emacs.d', '.cabal'], 'ln -s ../Documents ~/.emacs.d/init.el && ln -s ../dotfiles ~/.cabal/bin')
    // The home itself on PATH: its links are not followed to their folders either.
    const script = 'ls ~/Documents 2>&1 || true; cat ~/.emacs.d/init.el/taxes.txt 2>&1 || true; cat ~/dotfiles/private 2>&1 || true; cat ~/.zshrc'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env: {...world.env, PATH: `${world.home}:${world.env.PATH}`}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('secret of')
    expect(result.stdout).not.toContain('private notes')
    expect(result.stdout).toMatch(/setopt x\n$/)
  })

  it('follows no link an earlier run planted to a file of the home: a start-up file or a program on PATH leading to a secret shows nothing', async () => {
    world = new World('home-planted-file-links')
    plantUnlisted()
    mkdirSync(join(world.home, '.emacs.d'))
    mkdirSync(join(world.home, '.local', 'bin'), {recursive: true})
    // The user's: a program linked on PATH through a folder of tools, and a script of theirs holding a token.
    world.write(join(world.home, 'tools', 'real-tool'), '#!/bin/sh\n')
    symlinkSync(join(world.home, 'tools', 'tool'), join(world.home, '.local', 'bin', 'tool'))
    symlinkSync('real-tool', join(world.home, 'tools', 'tool'))
    world.write(join(world.home, 'scripts', 'deploy.sh'), 'DEPLOY_TOKEN=secret of deploy\n')
    chmodSync(join(world.home, 'scripts', 'deploy.sh'), 0o755)
    await earlierRun(
      ['.emacs.d', '.local/bin', 'tools'],
      'ln -s ../.kaggle/kaggle.json ~/.emacs.d/init.el && ln -s ../../Documents/taxes.txt ~/.local/bin/taxes && ln -sf ../scripts/deploy.sh ~/tools/tool',
    )
    const PATH = `${join(world.home, '.local', 'bin')}:${world.env.PATH}`
    const script = 'cat ~/.emacs.d/init.el ~/.local/bin/taxes ~/.local/bin/tool ~/scripts/deploy.sh 2>/dev/null; echo done'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env: {...world.env, PATH}})
    expect(result.stdout, result.stderr).toBe('done\n')
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

  it("holds yarn's configs without their logins: the settings read as outside, no token is there", async () => {
    world = new World('home-yarnrc')
    world.write(
      join(world.home, '.yarnrc'),
      'registry "https://registry.work.example/"\n"//registry.work.example/:_authToken" "SECRETyarn1"\nalways-auth true\n' +
        '_auth SECRETauth\n--install.frozen-lockfile true\n',
    )
    world.write(
      join(world.home, '.yarnrc.yml'),
      'npmRegistryServer: "https://registry.work.example"\nnpmAuthToken: SECRETberry\nnpmAuthIdent: "me:SECRETident"\nnpmAlwaysAuth: true\n' +
        'npmScopes:\n  work:\n    npmRegistryServer: "https://npm.work.example"\n    npmAuthToken: "SECRETscope"\n' +
        'npmRegistries:\n  "//npm.other.example":\n    npmAuthToken: >-\n      SECRETfolded\n    npmAlwaysAuth: true\nenableTelemetry: false\n',
    )
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `cat ~/.yarnrc ~/.yarnrc.yml; ${grepSecret}`])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      'registry "https://registry.work.example/"\n--install.frozen-lockfile true\n' +
        'npmRegistryServer: "https://registry.work.example"\nnpmScopes:\n  work:\n    npmRegistryServer: "https://npm.work.example"\n' +
        'npmRegistries:\n  "//npm.other.example":\nenableTelemetry: false\ngrep: 1\n',
    )
    // Without the namespaces nothing can be bound over them: hidden whole.
    world.write(configFile(), 'isolation = "landlock-only"\n')
    const landlock = await world.hmm(['run', '--rm', 'sh', '-c', 'cat ~/.yarnrc ~/.yarnrc.yml 2>/dev/null || echo hidden'])
    expect(landlock.stdout).toBe('hidden\n')
  })

  it("holds pip's configs with their indexes but no login: pip reads its settings as outside, no token is there", async () => {
    world = new World('home-pip-conf')
    world.write(
      join(world.home, '.config', 'pip', 'pip.conf'),
      '[global]\nindex-url = https://__token__:SECRETpip@pypi.work.example/simple\nextra-index-url =\n    https://pypi.org/simple\n' +
        '    https://SECRETbare@pypi.other.example/simple\ntimeout = 60\ncert = /etc/ssl/certs/ca-certificates.crt\nclient-cert = /keys/SECRETclient.pem\n',
    )
    world.write(
      join(world.home, '.pip', 'pip.conf'),
      '[install]\ntrusted-host = pypi.work.example\n[global]\nproxy = http://me:SECRETproxy@proxy.example:3128\n',
    )
    // A file of its own named by the environment, read by pip as well.
    const named = world.write(join(world.home, 'work', 'pip.ini'), '[global]\nretries = 2\nindex-url = https://me:SECRETnamed@pypi.named.example/simple\n')
    // A Python of pyenv's and a pipenv environment: pip reads <prefix>/pip.conf of whichever the command runs.
    for (const prefix of ['.pyenv/versions/3.12.0', '.local/share/virtualenvs/proj-1a2b'])
      world.write(join(world.home, prefix, 'pip.conf'), `[global]\nindex-url = https://me:SECRETsite@pypi.site.example/simple\n`)
    const env = {...world.env, PIP_CONFIG_FILE: named}
    const files = 'cat ~/.config/pip/pip.conf ~/.pip/pip.conf ~/work/pip.ini'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `${files}; ${grepSecret}`], {env})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      '[global]\nindex-url = https://pypi.work.example/simple\nextra-index-url =\n    https://pypi.org/simple\n    https://pypi.other.example/simple\n' +
        'timeout = 60\ncert = /etc/ssl/certs/ca-certificates.crt\n' +
        '[install]\ntrusted-host = pypi.work.example\n[global]\nproxy = http://proxy.example:3128\n' +
        '[global]\nretries = 2\nindex-url = https://pypi.named.example/simple\ngrep: 1\n',
    )
    // pip itself, where the machine has it: the same settings as outside, less the logins (the user's files: pip reads
    // them only when no PIP_CONFIG_FILE is there).
    const pip = ['/usr/bin/python3', '-m', 'pip', 'config', 'list']
    const outside = execaSync(pip[0], pip.slice(1), {reject: false, env: world.env, extendEnv: false})
    if (outside.exitCode !== 0) return
    const inside = await world.hmm(['run', '--rm', ...pip])
    expect(inside.exitCode, inside.stderr).toBe(0)
    // (Less what the environment sets: hmm turns pip's version check off inside.)
    const fromFiles = (listed: string) => listed.replace(/^:env:.*\n?/gm, '').trim()
    const withoutLogins = fromFiles(outside.stdout)
      .replace(/^global\.client-cert=.*\n/m, '')
      .replace(/[\w.-]+(:[^@\s/]*)?@(?=pypi|proxy)/g, '')
    expect(fromFiles(inside.stdout)).toBe(withoutLogins)
    expect(inside.stdout).toContain("global.timeout='60'")
  })

  it("holds cargo's config without its registries' tokens and maven's settings without passwords; cargo's credentials are absent", async () => {
    world = new World('home-cargo-m2')
    const cargoConfig =
      '[build]\njobs = 2\n[registry]\ndefault = "work"\ntoken = "SECRETcrates"\nglobal-credential-providers = [\n  "cargo:token",\n]\n' +
      '[registries.work]\nindex = "sparse+https://cargo.work.example/index/"\ntoken = "SECRETwork"\ncredential-provider = "cargo:token"\n' +
      '[registries]\nother = { index = "https://me:SECRETurl@git.example/index", token = "SECRETinline" }\n' +
      'third.token = "SECRETdotted"\n[alias]\nhi = "version"\n'
    world.write(join(world.home, '.cargo', 'config.toml'), cargoConfig)
    world.write(join(world.home, '.cargo', 'config'), '[registry]\ntoken = "SECRETold"\n[net]\ngit-fetch-with-cli = true\n')
    world.write(join(world.home, '.cargo', 'credentials.toml'), '[registry]\ntoken = "SECRETcredentials"\n')
    world.write(
      join(world.home, '.m2', 'settings.xml'),
      '<settings>\n  <servers>\n    <server>\n      <id>work</id>\n      <username>me</username>\n      <password>SECRETmaven</password>\n    </server>\n' +
        '    <server>\n      <id>signing</id>\n      <privateKey>${user.home}/.ssh/SECRETkey</privateKey>\n      <passphrase>SECRETphrase</passphrase>\n    </server>\n' +
        '    <server>\n      <id>gitlab</id>\n      <configuration>\n        <httpHeaders>\n          <property>\n            <name>Private-Token</name>\n' +
        '            <value>SECRETgitlab</value>\n          </property>\n        </httpHeaders>\n        <timeout>30</timeout>\n      </configuration>\n    </server>\n  </servers>\n' +
        '  <mirrors>\n    <mirror><id>work</id><url>https://maven.work.example/</url><mirrorOf>*</mirrorOf></mirror>\n  </mirrors>\n' +
        '  <proxies>\n    <proxy><id>p</id><host>proxy.example</host><port>3128</port><username>me</username><password>SECRETproxy</password></proxy>\n  </proxies>\n</settings>\n',
    )
    const script = `cat ~/.cargo/config.toml ~/.cargo/config ~/.m2/settings.xml; test -e ~/.cargo/credentials.toml || echo absent; ${grepSecret}`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(
      '[build]\njobs = 2\n[registry]\ndefault = "work"\n[registries.work]\nindex = "sparse+https://cargo.work.example/index/"\n' +
        '[registries]\nother = { index = "https://git.example/index" }\n[alias]\nhi = "version"\n' +
        '[registry]\n[net]\ngit-fetch-with-cli = true\n' +
        '<settings>\n  <servers>\n    <server>\n      <id>work</id>\n      <username>me</username>\n    </server>\n' +
        '    <server>\n      <id>signing</id>\n    </server>\n' +
        '    <server>\n      <id>gitlab</id>\n      <configuration>\n        <timeout>30</timeout>\n      </configuration>\n    </server>\n  </servers>\n' +
        '  <mirrors>\n    <mirror><id>work</id><url>https://maven.work.example/</url><mirrorOf>*</mirrorOf></mirror>\n  </mirrors>\n' +
        '  <proxies>\n    <proxy><id>p</id><host>proxy.example</host><port>3128</port><username>me</username></proxy>\n  </proxies>\n</settings>\n' +
        'absent\ngrep: 1\n',
    )
    expect(readFileSync(join(world.home, '.cargo', 'config.toml'), 'utf8')).toBe(cargoConfig)
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
    // Another version, not on PATH: the command may run it all the same.
    world.write(join(world.home, '.nvm', 'versions', 'node', 'v18.0.0', 'etc', 'npmrc'), '//registry.npmjs.org/:_authToken=npm_SECRETv18\n')
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

  it("holds start-up files without a statement that sets a credential, whatever its spelling, nor an editor's key", async () => {
    world = new World('home-startup-statements')
    world.write(
      join(world.home, '.bashrc'),
      'alias ll=\'ls -l\'\nexport SSH_PRIVATE_KEY="-----BEGIN OPENSSH PRIVATE KEY-----\nLEAKkeybody\n-----END OPENSSH PRIVATE KEY-----"\n' +
        "export DB_PASSWORD='first\nLEAKsecondline'\nexport -n NPM_TOKEN=LEAKnpm\nexport EDITOR=vim OPENAI_API_KEY=LEAKsecond\n" +
        'export AWS_SECRET_ACCESS_KEY=\\\nLEAKcontinued\ncat > /tmp/.netrc.$$ <<NETRC\nmachine api.example.com login bob password LEAKheredoc\nNETRC\n' +
        ": ${ANTHROPIC_API_KEY:=LEAKdefault}\nalias deploy='HEROKU_API_KEY=LEAKalias heroku'\nexport GH_TOKEN+=LEAKappend\n" +
        'declare -A tokens=([gitlab]=LEAKarray)\nexport PAGER=less\n',
    )
    world.write(join(world.home, '.config', 'zsh', 'conf.d', 'secrets.zsh'), 'export GITLAB_TOKEN=LEAKzsh\n')
    world.write(join(world.home, '.oh-my-zsh', 'custom', 'plugins', 'mine', 'mine.plugin.zsh'), 'export GITLAB_TOKEN=LEAKomz\n')
    world.write(join(world.home, '.config', 'fish', 'functions', 'gh.fish'), 'function gh\n  set -lx GITHUB_TOKEN LEAKfish\n  command gh $argv\nend\n')
    world.write(join(world.home, '.config', 'nvim', 'init.lua'), 'vim.env.OPENAI_API_KEY = "LEAKnvim"\nvim.opt.number = true\n')
    world.write(join(world.home, '.emacs.d', 'init.el'), '(setq gptel-api-key "LEAKemacs")\n')
    world.write(join(world.home, '.vimrc'), 'let g:codeium_api_key = "LEAKvimrc"\nset number\n')
    world.write(join(world.home, '.bash_logout'), 'export OPENAI_API_KEY=LEAKlogout\nclear\n')
    const script = `grep -h -e '^alias ll' -e PAGER -e number -e clear ~/.bashrc ~/.vimrc ~/.config/nvim/init.lua ~/.bash_logout; ${grepSecret.replace('t=SECRET', 't=LEAK')}`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe("alias ll='ls -l'\nexport PAGER=less\nset number\nvim.opt.number = true\nclear\ngrep: 1\n")
  })

  it("holds package managers' configs without a login in any spelling their formats allow", async () => {
    world = new World('home-config-spellings')
    world.write(
      join(world.home, '.yarnrc.yml'),
      'npmRegistryServer: "https://r.example"\nnpmScopes: { acme: { npmRegistryServer: "https://npm.acme.example", npmAuthToken: LEAKflowmap } }\n' +
        'npmRegistries:\n  "https://r2.example": {npmAuthIdent: "bob:LEAKident"}\n',
    )
    world.write(join(world.home, '.yarnrc'), 'registry "https://r.example/"\n_auth: LEAKcolon\n"//r.example/:_password": LEAKquotedcolon\n')
    world.write(
      join(world.home, '.config', 'pip', 'pip.conf'),
      '[global]\nextra-index-url = https://dl.cloudsmith.io/LEAKq7Hx2Zp9Lm4Rt8Vw/acme/py/python/simple/\ntimeout = 60\n',
    )
    world.write(
      join(world.home, '.cargo', 'config.toml'),
      '[registry]\ntoken = """\nLEAKmultibasic"""\n[registries.acme]\nindex = "sparse+https://cargo.acme.example/"\ntoken = \'\'\'\nLEAKmultiliteral\n\'\'\'\n' +
        '[registries]\nother = { index = "sparse+https://o.example/", "token" = "LEAKquotedinline" }\n[build]\njobs = 2\n',
    )
    world.write(
      join(world.home, '.m2', 'settings.xml'),
      '<?xml version="1.0"?>\n<!DOCTYPE settings [ <!ENTITY pw "LEAKentity"> ]>\n<settings>\n  <servers>\n' +
        '    <server><id>b</id><username>bob</username><password>&pw;</password></server>\n  </servers>\n' +
        '  <profiles><profile><id>p</id><properties>\n    <gpg.passphrase>LEAKgpg</gpg.passphrase>\n    <sonar.login>LEAKsonar</sonar.login>\n' +
        '    <github.token>LEAKgithub</github.token>\n  </properties></profile></profiles>\n</settings>\n',
    )
    const script = `grep -h -e npmRegistryServer -e registry -e timeout -e jobs ~/.yarnrc.yml ~/.yarnrc ~/.config/pip/pip.conf ~/.cargo/config.toml; ${grepSecret.replace('t=SECRET', 't=LEAK')}`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('npmRegistryServer: "https://r.example"\nregistry "https://r.example/"\ntimeout = 60\njobs = 2\ngrep: 1\n')
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
  it("hide the logins tools keep in a cache or a toolchain (Hugging Face's token, uv's credentials, nimble's and opam-publish's tokens), and the rest works", async () => {
    world = new World('home-cache-logins')
    const logins = [
      '.cache/huggingface/token',
      '.cache/huggingface/stored_tokens',
      '.local/share/uv/credentials/credentials.toml',
      '.nimble/github_api_token',
      '.opam/plugins/opam-publish/me.token',
    ]
    for (const rel of logins) world.write(join(world.home, rel), `SECRET of ${rel}\n`)
    world.write(join(world.home, '.cache', 'huggingface', 'hub', 'model'), 'weights\n')
    world.write(join(world.home, '.nimble', 'pkgs2', 'p', 'p.nim'), 'proc p() = discard\n')
    const script = [
      'cat ~/.cache/huggingface/hub/model ~/.nimble/pkgs2/p/p.nim',
      'mkdir ~/.cache/huggingface/xet && echo new > ~/.cache/huggingface/new && cat ~/.cache/huggingface/new',
      // A file hidden in a kept place reads as an empty file nothing may open: grep says so, and names no file.
      't=SECRET',
      'grep -rl -D skip "$t" "$HOME" /tmp 2>/dev/null',
      'echo searched',
    ].join('\n')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.stdout, result.stderr).toBe('weights\nproc p() = discard\nnew\nsearched\n')
  })

  it("show the caches of known tools in the user's ~/.cache, and nothing else of it", async () => {
    world = new World('home-cache-known')
    world.write(join(world.home, '.cache', 'pip', 'http', 'entry'), 'wheel\n')
    const unknown = ['mozilla/firefox/cache2/entry', 'thumbnails/large/a.png', 'some-cli/token.json', 'loose-file']
    for (const rel of unknown) world.write(join(world.home, '.cache', rel), `SECRET of ${rel}\n`)
    const script = [
      'cat ~/.cache/pip/http/entry',
      'ls -A ~/.cache',
      grepSecret,
      'mkdir ~/.cache/thumbnails && echo mine > ~/.cache/thumbnails/a && ls ~/.cache/thumbnails',
    ].join('; ')
    const result = await world.hmm(['run', '-n', 'c', 'sh', '-c', script])
    expect(result.stdout, result.stderr).toBe('wheel\npip\ngrep: 1\na\n')
    // The next command sees the workspace's own; the user's cache is as it was.
    expect((await world.hmm(['exec', 'c', 'sh', '-c', 'ls -A ~/.cache ~/.cache/thumbnails'])).stdout).toBe(
      `${world.home}/.cache:\npip\nthumbnails\n\n${world.home}/.cache/thumbnails:\na\n`,
    )
    for (const rel of unknown) expect(readFileSync(join(world.home, '.cache', rel), 'utf8')).toBe(`SECRET of ${rel}\n`)
    expect(readdirSync(join(world.home, '.cache', 'thumbnails', 'large'))).toEqual(['a.png'])
  })

  it("show of Bazel's only its install base and repository cache: no output base, so no running server's cookie", async () => {
    world = new World('home-cache-bazel')
    const root = join(world.home, '.cache', 'bazel', '_bazel_me')
    world.write(join(root, 'install', 'f00d', 'A-server.jar'), 'jar\n')
    world.write(join(root, 'cache', 'repos', 'v1', 'content_addressable', 'sha256', 'ab', 'file'), 'archive\n')
    // The user's Bazel server of another project: whoever has its cookie and port has it build and test as the user.
    const base = join(root, '0123456789abcdef0123456789abcdef')
    world.write(join(base, 'server', 'request_cookie'), 'SECRET cookie\n')
    world.write(join(base, 'server', 'command_port'), '127.0.0.1:43210 SECRET\n')
    world.write(join(base, 'execroot', 'other', '.env'), 'SECRET of the other project\n')
    const script = [
      'cd ~/.cache/bazel/_bazel_me',
      'cat install/f00d/A-server.jar cache/repos/v1/content_addressable/sha256/ab/file',
      'ls -A',
      'mkdir -p fedcba/server && echo mine > fedcba/server/request_cookie && cat fedcba/server/request_cookie',
      grepSecret,
    ].join('; ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.stdout, result.stderr).toBe('jar\narchive\ncache\ninstall\nmine\ngrep: 1\n')
    expect(readFileSync(join(base, 'server', 'request_cookie'), 'utf8')).toBe('SECRET cookie\n')
  })

  it("of caches the user has not got are the workspace's alone: nothing is made in the user's home", async () => {
    world = new World('home-cache-absent')
    const before = readdirSync(world.home).sort()
    const script = 'mkdir -p ~/.cargo/registry && echo x > ~/.cargo/registry/f && cat ~/.cargo/registry/f && ls -d ~/.npm ~/.cache ~/.rustup'
    const result = await world.hmm(['run', '-n', 'c', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`x\n${world.home}/.cache\n${world.home}/.npm\n${world.home}/.rustup\n`)
    expect((await world.hmm(['exec', 'c', 'cat', join(world.home, '.cargo', 'registry', 'f')])).stdout).toBe('x\n')
    // hmm's own data directory (~/.local/share/hmm) aside.
    expect(
      readdirSync(world.home)
        .filter(name => name !== '.local')
        .sort(),
    ).toEqual(before)
  })

  it('behave as directories: what the real cache holds can be removed, renamed and rewritten inside, the real cache unchanged', async () => {
    world = new World('home-cache-layers')
    world.write(join(world.home, '.npm', '_cacache', 'index-v5', 'ab', 'entry'), 'cached\n')
    world.write(join(world.home, '.npm', '_logs', 'old.log'), 'log\n')
    world.write(join(world.home, '.cache', 'pip', 'data'), 'old\n')
    const script = [
      'rm -rf ~/.npm/_cacache',
      'mv ~/.npm/_logs ~/.npm/logs-moved',
      'echo new > ~/.cache/pip/data',
      'rm -r ~/.cache/pip && mkdir ~/.cache/pip && echo again > ~/.cache/pip/data',
      'ls -A ~/.npm',
      'cat ~/.cache/pip/data',
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
      'test -e ~/.npm/_cacache || echo no-cacache; test -d ~/.npm/logs-moved && echo moved; cat ~/.cache/pip/data',
    ])
    expect(again.stdout).toBe('no-cacache\nmoved\nagain\n')
    expect(readFileSync(join(world.home, '.npm', '_cacache', 'index-v5', 'ab', 'entry'), 'utf8')).toBe('cached\n')
    expect(readFileSync(join(world.home, '.npm', '_logs', 'old.log'), 'utf8')).toBe('log\n')
    expect(readFileSync(join(world.home, '.cache', 'pip', 'data'), 'utf8')).toBe('old\n')
  })
})
