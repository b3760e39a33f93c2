// The secrets hidden by default (SPEC "Sandbox", Reading) and the config
// file's hide/unhide: the command cannot read any of them, as root or not.
import {execa, execaSync} from 'execa'
import {existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {BIN, World} from '../world.js'

/** Each default secret of SPEC, with a file in it where it is a directory. */
const HOME_SECRETS = [
  '.ssh/id_ed25519',
  '.aws/credentials',
  '.gnupg/private-keys-v1.d/key.key',
  '.config/gh/hosts.yml',
  '.netrc',
  '.git-credentials',
  '.config/git/credentials',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.docker/config.json',
  '.kube/config',
  '.config/gcloud/application_default_credentials.json',
  '.azure/accessTokens.json',
  '.oci/config',
  '.terraform.d/credentials.tfrc.json',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.config/hub',
  '.local/share/keyrings/login.keyring',
  '.password-store/bank.gpg',
  '.mozilla/firefox/x.default/logins.json',
  '.config/google-chrome/Default/Login Data',
  '.config/chromium/Default/Cookies',
  '.bash_history',
  '.zsh_history',
  '.local/share/fish/fish_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  // Databases', vaults' and assistants' logins (the attacker's review, finding 9).
  '.pgpass',
  '.my.cnf',
  '.vault-token',
  '.config/github-copilot/apps.json',
  '.config/github-copilot/hosts.json',
  '.authinfo',
  '.authinfo.gpg',
  '.s3cfg',
  '.boto',
  '.config/rclone/rclone.conf',
  '.databrickscfg',
  '.terraformrc',
  '.pulumi/credentials.json',
  '.config/doctl/config.yaml',
  '.fly/config.yml',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.config/sops/age/keys.txt',
  '.local/share/atuin/history.db',
  '.sqlite_history',
  '.rediscli_history',
  '.config/BraveSoftware/Brave-Browser/Default/Cookies',
  '.thunderbird/x.default/logins.json',
  // The agents' logins: only the agent's own profile gives its own back (agents.test).
  '.claude/.credentials.json',
  '.codex/auth.json',
  // Browsers, messengers and logins the list missed (the attacker's third review, F14).
  '.config/vivaldi/Default/Cookies',
  '.config/microsoft-edge/Default/Cookies',
  '.config/opera/Cookies',
  'snap/firefox/common/.mozilla/firefox/x.default/cookies.sqlite',
  'snap/chromium/common/chromium/Default/Cookies',
  '.var/app/org.mozilla.firefox/.mozilla/firefox/x.default/logins.json',
  '.var/app/com.google.Chrome/config/google-chrome/Default/Cookies',
  '.config/discord/Local Storage/leveldb/000003.log',
  '.config/Slack/Cookies',
  '.config/Signal/config.json',
  '.local/share/TelegramDesktop/tdata/key_datas',
  '.config/Bitwarden/data.json',
  '.pki/nssdb/key4.db',
  '.config/containers/auth.json',
  '.config/filezilla/sitemanager.xml',
  '.minikube/profiles/minikube/client.key',
  '.wakatime.cfg',
  '.config/ngrok/ngrok.yml',
  '.config/configstore/firebase-tools.json',
  '.config/stripe/config.toml',
  '.config/syncthing/key.pem',
  '.local/state/syncthing/key.pem',
  '.viminfo',
  '.lesshst',
  // Agents' MCP servers' tokens and transcripts (F15): each agent's own profile gives its own back (agents.test).
  '.claude.json',
  '.claude.json.backup',
  '.claude/projects/-home-me-bank/s.jsonl',
  '.claude/history.jsonl',
  '.codex/config.toml',
  '.codex/sessions/2026/s.jsonl',
  '.config/Claude/claude_desktop_config.json',
  '.cursor/mcp.json',
  '.config/Cursor/User/globalStorage/state.vscdb',
  '.codeium/windsurf/mcp_config.json',
  '.continue/config.yaml',
  '.gemini/settings.json',
  // Tokens of servers on the loopback that run code for whoever holds them (F12).
  '.local/share/jupyter/runtime/jpserver-4242.json',
  '.claude/ide/4242.lock',
  '.config/code-server/config.yaml',
  // The attacker's fifth review, F6: the X11 and ICE cookies, VNC's password, forges', clouds' and tunnels' logins.
  '.Xauthority',
  '.ICEauthority',
  '.vnc/passwd',
  '.config/tigervnc/passwd',
  '.config/glab-cli/config.yml',
  '.subversion/auth/svn.simple/0123abcd',
  '.local/share/com.vercel.cli/auth.json',
  '.config/netlify/config.json',
  '.wrangler/config/default.toml',
  '.config/.wrangler/config/default.toml',
  '.supabase/access-token',
  '.config/hcloud/cli.toml',
  '.config/helm/repositories.yaml',
  '.cloudflared/cert.pem',
  // F7: every copy of ~/.claude.json beside it, whatever its suffix (Claude Code's .corrupted.<ms>).
  '.claude.json.corrupted.1764600000000',
  '.claude.json.old',
  // The attacker's sixth review, F6: VS Code's remote servers' (and its forks') connection tokens, its CLI's tunnel
  // token; F7: Git Credential Manager's store, Gerrit's cookies, package managers' and data tools' logins.
  '.vscode-server/.0123abcd.token',
  '.vscode-server-insiders/.0123abcd.token',
  '.vscodium-server/.0123abcd.token',
  '.cursor-server/.0123abcd.token',
  '.windsurf-server/.0123abcd.token',
  '.vscode/cli/token.json',
  '.vscode-insiders/cli/token.json',
  '.gcm/store/git/https/github.com/me.credential',
  '.gitcookies',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
  '.bundle/config',
  '.nuget/NuGet/NuGet.Config',
  '.config/NuGet/NuGet.Config',
  '.sbt/.credentials',
  '.ivy2/.credentials',
  '.dbt/profiles.yml',
  '.snowflake/connections.toml',
  '.config/op/config',
  '.huggingface/token',
]

let world: World
const isRoot = process.getuid?.() === 0
// As root, a host key of our own beside the real ones (if any): /etc/ssh/*_key is expanded when the policy is made.
const hostKey = `/etc/ssh/ssh_host_hmmtest${process.pid}_key`

beforeAll(() => {
  world = new World('secrets')
  world.file('f.txt', 'x\n')
  for (const rel of HOME_SECRETS) world.write(join(world.home, rel), `secret of ${rel}\n`)
  world.write(join(world.home, 'work', '.env'), 'secret of work/.env\n')
  world.write(join(world.home, 'work', 'notes'), 'readable notes\n')
  world.write(join(world.home, '.config', 'hmm', 'config.toml'), VISIBLE)
  if (isRoot) {
    mkdirSync('/etc/ssh', {recursive: true})
    writeFileSync(hostKey, 'secret host key\n', {mode: 0o600})
  }
})
afterEach(context => {
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => {
  if (isRoot) rmSync(hostKey, {force: true})
  world.dispose()
})

/** Runs a script that tries to read each path and prints READ <path> for each it could. */
async function tryToRead(paths: string[]): Promise<string> {
  const script = paths.map(path => `cat '${path}' 2>/dev/null && echo 'READ ${path}'`).join('\n') + '\necho done\n'
  world.write(join(world.root, 'try.sh'), script)
  const result = await world.hmm(['run', '--rm', 'sh', join(world.root, 'try.sh')])
  expect(result.stdout).toMatch(/done\n$/)
  return result.stdout
}

const configFile = () => join(world.home, '.config', 'hmm', 'config.toml')
/** The home as it is, less the secrets (home.test.ts tests the composed one): what this file tests is the list. */
const VISIBLE = 'home = "visible"\n'

describe('the sandboxed command', () => {
  it('cannot read any default secret of the home directory', async () => {
    // Package managers' configs are read as copies without their logins, with the namespaces (home.test.ts).
    const cleaned = ['.npmrc', '.yarnrc', '.yarnrc.yml', '.config/pip/pip.conf', '.pip/pip.conf']
    const out = await tryToRead(HOME_SECRETS.filter(rel => !cleaned.includes(rel)).map(rel => join(world.home, rel)))
    expect(out).not.toContain('READ')
    expect(out).not.toContain('secret of')
  })

  it('cannot read a secret through a symbolic link inside a hidden directory, to a file or directory kept elsewhere', async () => {
    const linked = new World('secret-links')
    linked.write(join(linked.home, '.config', 'hmm', 'config.toml'), VISIBLE)
    linked.file('f.txt', 'x\n')
    const notes = linked.write(join(linked.home, 'notes'), 'readable notes\n')
    const keys = linked.write(join(linked.home, 'keys', 'id_ed25519'), 'linked key\n')
    linked.write(join(linked.home, 'vault', 'aws', 'credentials'), 'linked aws\n')
    mkdirSync(join(linked.home, '.ssh'))
    symlinkSync(keys, join(linked.home, '.ssh', 'id_ed25519'))
    symlinkSync(join('..', 'vault', 'aws'), join(linked.home, '.aws'))
    mkdirSync(join(linked.home, '.kube'))
    symlinkSync(join('..', 'vault'), join(linked.home, '.kube', 'vault'))
    // A link to the home directory or to the root is no secret's place: hiding it would hide the work.
    symlinkSync(linked.home, join(linked.home, '.ssh', 'home'))
    symlinkSync('/', join(linked.home, '.kube', 'root'))
    try {
      const script = ['.ssh/id_ed25519', 'keys/id_ed25519', '.aws/credentials', '.kube/vault/aws/credentials', 'vault/aws/credentials']
        .map(rel => `cat '${join(linked.home, rel)}' 2>/dev/null`)
        .join('; ')
      const result = await linked.hmm(['run', '--rm', 'sh', '-c', `${script}; cat '${notes}'; echo done`])
      expect(result.stdout).toBe('readable notes\ndone\n')
    } finally {
      linked.dispose()
    }
  })

  it('cannot read /etc/shadow, /etc/gshadow nor the ssh host keys', async () => {
    const keys = execaSync('sh', ['-c', 'ls /etc/ssh/*_key 2>/dev/null || true']).stdout.split('\n').filter(Boolean)
    if (isRoot) expect(keys).toContain(hostKey)
    const out = await tryToRead(['/etc/shadow', '/etc/gshadow', ...keys])
    expect(out).not.toContain('READ')
    // The rest of /etc stays readable.
    expect(await tryToRead(['/etc/passwd'])).toContain('READ /etc/passwd')
  })

  it.skipIf(!isRoot)("run as root, cannot read other users' secrets nor the system's private keys (root only: a user cannot read them anyway)", async () => {
    // Another user's home under /home, root's own (the world's HOME is elsewhere), system keys and connections.
    const other = `/home/hmm-secrets-test-${process.pid}`
    const secrets = [
      join(other, '.ssh', 'id_ed25519'),
      join(other, '.aws', 'credentials'),
      join(other, '.claude.json'),
      join('/root', '.ssh', `hmm-test-${process.pid}`),
      `/etc/ssl/private/hmm-test-${process.pid}.key`,
      `/etc/NetworkManager/system-connections/hmm-test-${process.pid}.nmconnection`,
      // Another user's copy of ~/.claude.json, as Claude Code leaves it (F7).
      join(other, '.claude.json.corrupted.1764600000000'),
      // Debian's daily copies of /etc/shadow and /etc/gshadow (cron.daily/passwd), where this machine has none to keep.
      ...['/var/backups/shadow.bak', '/var/backups/gshadow.bak'].filter(path => !existsSync(path)),
    ]
    // What the test made, removed after: the first missing directory on the way, or the file.
    const made = secrets.map(path => {
      let first = path
      for (let dir = join(path, '..'); !existsSync(dir); dir = join(dir, '..')) first = dir
      return first
    })
    try {
      for (const path of secrets) world.write(path, `secret of ${path}\n`)
      world.write(join(other, 'notes'), 'readable notes\n')
      const out = await tryToRead([...secrets, join(other, 'notes')])
      expect(out).not.toContain('secret of')
      expect(out).toContain('readable notes')
    } finally {
      for (const path of [other, ...made]) rmSync(path, {recursive: true, force: true})
    }
  })

  it.skipIf(!isRoot)(
    "run as root, cannot read the secrets of a home /home lists as a link, nor of a home /etc/passwd names elsewhere (root only; the attacker's fifth review, F4)",
    async () => {
      // /home/alice -> /export/home/alice (automounters, a second disk), and a user whose home is not under /home at all.
      const linkedHome = join(world.root, 'export', 'alice')
      const link = `/home/hmm-secrets-linked-${process.pid}`
      const elsewhere = join(world.root, 'srv', 'bob')
      const user = `hmm-secrets-passwd-${process.pid}`
      const secrets = [join(linkedHome, '.ssh', 'id_ed25519'), join(linkedHome, '.aws', 'credentials'), join(elsewhere, '.ssh', 'id_ed25519')]
      for (const path of secrets) world.write(path, `secret of ${path}\n`)
      world.write(join(elsewhere, 'notes'), 'readable notes\n')
      symlinkSync(linkedHome, link)
      // The user is added only in hmm's own mount namespace, over a copy of the real file: the system's is left alone.
      const passwd = world.write(
        join(world.root, 'passwd'),
        `${readFileSync('/etc/passwd', 'utf8')}${user}:x:${60000 + (process.pid % 5000)}:100::${elsewhere}:/bin/sh\n`,
      )
      try {
        const script = [join(link, '.ssh', 'id_ed25519'), join(link, '.aws', 'credentials'), ...secrets, join(elsewhere, 'notes')]
          .map(path => `cat '${path}' 2>/dev/null`)
          .join('; ')
        const result = await execa(
          'unshare',
          ['-m', 'sh', '-c', 'mount --bind "$0" /etc/passwd && exec "$@"', passwd, process.execPath, BIN, 'run', '--rm', 'sh', '-c', `${script}; echo done`],
          {
            cwd: world.origin,
            env: world.env,
            extendEnv: false,
            reject: false,
          },
        )
        expect(result.stdout).toBe('readable notes\ndone')
      } finally {
        rmSync(link, {force: true})
      }
    },
  )

  it.skipIf(!isRoot)(
    "run as root, cannot read other users' hmm data directories, which hold copies of their hidden logins (root only; the attacker's eighth review, F8)",
    async () => {
      // Another user's workspace made with an agent profile: its state's copy of ~/.claude.json holds MCP servers' tokens.
      const other = `/home/hmm-secrets-data-${process.pid}`
      const copy = join(other, '.local', 'share', 'hmm', 'k3xq9a', 'agent-state', '.claude.json')
      try {
        world.write(copy, `secret of ${copy}\n`)
        world.write(join(other, '.local', 'share', 'notes'), 'readable notes\n')
        const out = await tryToRead([copy, join(other, '.local', 'share', 'notes')])
        expect(out).not.toContain('secret of')
        expect(out).toContain('readable notes')
      } finally {
        rmSync(other, {recursive: true, force: true})
      }
    },
  )

  it("cannot read the user's hmm data where HMM_HOME or XDG_DATA_HOME moved it from, nor where it moved it to (the attacker's eighth review, F8)", async () => {
    // The data was first in the default place, then under $XDG_DATA_HOME; HMM_HOME now puts it elsewhere.
    const places = [join(world.home, '.local', 'share', 'hmm'), join(world.root, 'xdg', 'hmm')]
    const copies = places.map(place => world.write(join(place, 'k3xq9a', 'agent-state', '.claude.json'), `secret of ${place}\n`))
    const env = {...world.env, HMM_HOME: join(world.root, 'data'), XDG_DATA_HOME: join(world.root, 'xdg')}
    try {
      const script = [...copies, join(world.root, 'data', 'registry.sqlite')].map(path => `cat '${path}' 2>/dev/null`).join('; ')
      const result = await world.hmm(['run', '--rm', 'sh', '-c', `${script}; cat '${join(world.home, 'work', 'notes')}'; echo done`], {env})
      expect(result.stdout).toBe('readable notes\ndone\n')
    } finally {
      for (const place of [...places, join(world.root, 'data')]) rmSync(place, {recursive: true, force: true})
    }
  })

  it('cannot read what the config file hides; reads what it unhides', async () => {
    world.write(configFile(), VISIBLE + 'hide = ["~/work/.env"]\nunhide = ["~/.npmrc"]\n')
    try {
      const out = await tryToRead([join(world.home, 'work', '.env'), join(world.home, 'work', 'notes'), join(world.home, '.npmrc'), join(world.home, '.netrc')])
      expect(out).not.toContain('secret of work/.env')
      expect(out).toContain('readable notes')
      expect(out).toContain('secret of .npmrc')
      expect(out).not.toContain('secret of .netrc')
    } finally {
      world.write(configFile(), VISIBLE)
    }
  })
})

describe('an origin holding a secret', () => {
  // The clone would copy the secret into the tree, where the command reads it.
  const refusal = (origin: string, secret: string) =>
    `hmm: ${origin} holds ${secret}, which the sandbox hides, so it cannot be cloned; run hmm in a project directory\n`

  it('is refused when the home directory is a repository and hmm runs in a plain directory of it', async () => {
    const dotfiles = new World('secret-in-origin')
    dotfiles.write(join(dotfiles.home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n')
    dotfiles.file('f.txt', 'x\n')
    execaSync('git', ['init', '-q', dotfiles.home], {env: dotfiles.env})
    const data = join(dotfiles.root, 'data')
    const env = {...dotfiles.env, HMM_HOME: data}
    const result = await dotfiles.hmm(['run', 'cat', join('..', '..', '.ssh', 'id_rsa')], {env})
    expect(result).toMatchObject({exitCode: 1, stdout: '', stderr: refusal(dotfiles.home, join(dotfiles.home, '.ssh'))})
    expect((await dotfiles.hmm(['ls', '--json'], {env})).stdout).toBe('[]\n')
    dotfiles.dispose()
  })

  it('is refused inside a secret', async () => {
    const result = await world.hmm(['run', 'true'], {cwd: join(world.home, '.ssh')})
    const ssh = join(world.home, '.ssh')
    expect(result).toMatchObject({
      exitCode: 1,
      stderr: `hmm: ${ssh} is hidden by the sandbox (${ssh}), so it cannot be cloned; run hmm in a project directory\n`,
    })
  })
})

describe('hmm sandbox', () => {
  it('shows the effective list of what may not be read', async () => {
    world.write(configFile(), VISIBLE + 'hide = ["~/work/.env"]\nunhide = ["~/.npmrc"]\n')
    try {
      const result = await world.hmm(['sandbox'])
      expect(result.exitCode).toBe(0)
      const hidden = result.stdout.split('may not read:\n')[1].split('may read:')[0]
      for (const path of ['.ssh', '.netrc', '.docker/config.json', '.bash_history', 'work/.env']) expect(hidden).toContain(`  ${join(world.home, path)}\n`)
      expect(hidden).toContain('  /etc/shadow\n')
      expect(hidden).not.toContain(join(world.home, '.npmrc'))
    } finally {
      world.write(configFile(), VISIBLE)
    }
  })
})
