// The command's environment (SPEC "Sandbox"): credential and socket
// variables removed, the agent's own key kept, the config's env applied,
// hmm's own variables set.
import {execa} from 'execa'
import {chmodSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {World, workspaceLine} from '../world.js'

let world: World
let agent: {socket: string; pid: string}

beforeAll(async () => {
  world = new World('env')
  world.file('f.txt', 'x\n')
  // A real ssh-agent holding a real key, its socket outside /tmp (the world is).
  const socket = join(world.root, 'agent.sock')
  const started = await execa('ssh-agent', ['-a', socket, '-s'], {env: world.env, extendEnv: false})
  agent = {socket, pid: /SSH_AGENT_PID=(\d+)/.exec(started.stdout)![1]}
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(world.root, 'id')], {env: world.env, extendEnv: false})
  await execa('ssh-add', [join(world.root, 'id')], {env: {...world.env, SSH_AUTH_SOCK: socket}, extendEnv: false})
})
afterEach(context => {
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(() => {
  if (agent) process.kill(Number(agent.pid))
  world.dispose()
})

describe("the command's environment", () => {
  it("has no way to the user's ssh-agent: ssh-add -l fails inside, works outside", async () => {
    const env = {...world.env, SSH_AUTH_SOCK: agent.socket, SSH_AGENT_PID: agent.pid}
    expect((await execa('ssh-add', ['-l'], {env, extendEnv: false})).stdout).toContain('ED25519')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'ssh-add -l; echo "status $?"; echo "sock=$SSH_AUTH_SOCK"'], {env})
    expect(result.stdout).not.toContain('ED25519')
    expect(result.stdout).toContain('status 2') // "Could not open a connection to your authentication agent"
    expect(result.stdout).toContain('sock=\n')
  })

  it("loses credential and socket variables, the display's, and the agents' logins", async () => {
    const env = {
      ...world.env,
      GITHUB_TOKEN: 'LEAKED_gh',
      GH_TOKEN: 'LEAKED_gh2',
      NPM_TOKEN: 'LEAKED_npm',
      AWS_SECRET_ACCESS_KEY: 'LEAKED_aws',
      AZURE_CLIENT_SECRET: 'LEAKED_az',
      TMUX: '/tmp/tmux-0/default,1,0',
      TMUX_PANE: '%1',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
      XDG_RUNTIME_DIR: '/run/user/0',
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      GPG_AGENT_INFO: '/x',
      STY: '1.pts',
      // The agents' logins are their profiles' alone (the attacker's fifth review, F11); the X display is the user's (F6).
      ANTHROPIC_API_KEY: 'sk-ant-LEAKED',
      ANTHROPIC_AUTH_TOKEN: 'LEAKED_ant_auth',
      CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-LEAKED',
      OPENAI_API_KEY: 'sk-openai-LEAKED',
      DISPLAY: 'localhost:10.0',
      XAUTHORITY: '/home/me/.Xauthority',
      ICEAUTHORITY: '/home/me/.ICEauthority',
      WAYLAND_DISPLAY: 'wayland-0',
      MY_SETTING: 'kept',
      BW_SESSION: 'LEAKED_bw',
      OP_SESSION_my: 'LEAKED_op',
      DATABASE_URL: 'postgres://app:LEAKED_pw@db:5432/app',
      PIP_INDEX_URL: 'https://__token__:LEAKED_pypi@pypi.example/simple',
      LOCAL_DB_URL: 'postgres://localhost/app',
      // The attacker's third review, F8.
      GITHUB_PAT: 'LEAKED_pat',
      GH_PAT: 'LEAKED_pat2',
      DOCKER_PASS: 'LEAKED_docker',
      DB_PASS: 'LEAKED_db',
      REGISTRY_AUTH: 'LEAKED_registry',
      AUTH: 'LEAKED_auth',
      SESSION_COOKIE: 'LEAKED_cookie',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/LEAKED_webhook',
    }
    const result = await world.hmm(['run', '--rm', 'env'], {env})
    expect(result.exitCode).toBe(0)
    const seen = Object.fromEntries(
      result.stdout
        .split('\n')
        .filter(Boolean)
        .map(line => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    )
    for (const name of [
      'GITHUB_TOKEN',
      'GH_TOKEN',
      'NPM_TOKEN',
      'AWS_SECRET_ACCESS_KEY',
      'AZURE_CLIENT_SECRET',
      'TMUX',
      'TMUX_PANE',
      'DBUS_SESSION_BUS_ADDRESS',
      'XDG_RUNTIME_DIR',
      'DOCKER_HOST',
      'GPG_AGENT_INFO',
      'STY',
      'BW_SESSION',
      'OP_SESSION_my',
      'DATABASE_URL',
      'PIP_INDEX_URL',
      'GITHUB_PAT',
      'GH_PAT',
      'DOCKER_PASS',
      'DB_PASS',
      'REGISTRY_AUTH',
      'AUTH',
      'SESSION_COOKIE',
      'SLACK_WEBHOOK_URL',
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'CLAUDE_CODE_OAUTH_TOKEN',
      'OPENAI_API_KEY',
      'DISPLAY',
      'XAUTHORITY',
      'ICEAUTHORITY',
      'WAYLAND_DISPLAY',
    ]) {
      expect(seen).not.toHaveProperty(name)
    }
    expect(result.stdout).not.toContain('LEAKED')
    expect(seen).toMatchObject({
      MY_SETTING: 'kept',
      PATH: world.env.PATH,
      LOCAL_DB_URL: 'postgres://localhost/app',
    })
  })

  it('loses the credentials a name filter misses, by name and by value, and keeps ordinary variables; hmm sandbox names them', async () => {
    // Issue 24: each of these reached the command before.
    const credentials = {
      TS_AUTHKEY: 'tskey-auth-LEAKED',
      NGROK_AUTHTOKEN: 'LEAKED_ngrok',
      DB_PWD: 'LEAKED_db',
      ORACLE_PWD: 'LEAKED_oracle',
      MNEMONIC: 'LEAKED abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
      ConnectionStrings__Default: 'Server=db;Database=app;User Id=sa;Password=LEAKED_mssql;',
      JDBC_DATABASE_URL: 'jdbc:postgresql://db:5432/app?user=app&password=LEAKED_jdbc',
      BUILD_NOTICE: 'https://hooks.slack.com/services/T0000/B0000/LEAKEDxxxxxxxxxx',
    }
    const ordinary = {
      NODE_ENV: 'production',
      TERM: 'xterm-256color',
      EDITOR: 'vim',
      CI: 'true',
      SITE_URL: 'https://example.com/app',
      PWD: world.origin,
      OLDPWD: world.home,
    }
    const env = {...world.env, ...credentials, ...ordinary}
    const result = await world.hmm(['run', '--rm', 'env'], {env})
    expect(result.exitCode, result.stderr).toBe(0)
    const seen = result.stdout.split('\n')
    for (const name of Object.keys(credentials)) expect(seen.filter(line => line.startsWith(`${name}=`))).toEqual([])
    expect(result.stdout).not.toContain('LEAKED')
    for (const [name, value] of Object.entries(ordinary)) if (name !== 'PWD') expect(seen).toContain(`${name}=${value}`)
    expect(seen.filter(line => line.startsWith('PWD=')).length).toBe(1)
    const sandbox = await world.hmm(['sandbox'], {env})
    const removes = /^environment: removes (.*) \(/m.exec(sandbox.stdout)?.[1].split(' ')
    expect(removes).toEqual(expect.arrayContaining(Object.keys(credentials)))
    for (const name of Object.keys(ordinary)) expect(removes).not.toContain(name)
    // The config file's keep still wins.
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), '[env]\nkeep = ["DB_PWD", "BUILD_NOTICE"]\n')
    const kept = await world.hmm(['run', '--rm', 'sh', '-c', 'echo "$DB_PWD $BUILD_NOTICE $ORACLE_PWD."'], {env})
    expect(kept.stdout).toBe(`LEAKED_db ${credentials.BUILD_NOTICE} .\n`)
    await world.sh('rm ~/.config/hmm/config.toml')
  })

  it("keeps each agent's own login for its profile only: claude the Anthropic ones, codex OpenAI's", async () => {
    const bin = join(world.root, 'agents')
    for (const name of ['claude', 'codex']) {
      world.write(join(bin, name), `#!/bin/sh\nenv | grep -E '^(ANTHROPIC|CLAUDE_CODE_OAUTH|OPENAI)' | sort\n`)
      chmodSync(join(bin, name), 0o755)
    }
    const env = {
      ...world.env,
      PATH: `${bin}:${world.env.PATH}`,
      ANTHROPIC_API_KEY: 'ant-key',
      ANTHROPIC_AUTH_TOKEN: 'ant-token',
      CLAUDE_CODE_OAUTH_TOKEN: 'ant-oauth',
      OPENAI_API_KEY: 'openai-key',
    }
    const claude = await world.hmm(['run', '--rm', 'claude'], {env})
    expect(claude.stdout).toBe('ANTHROPIC_API_KEY=ant-key\nANTHROPIC_AUTH_TOKEN=ant-token\nCLAUDE_CODE_OAUTH_TOKEN=ant-oauth\n')
    const codex = await world.hmm(['run', '--rm', 'codex'], {env})
    expect(codex.stdout).toBe('OPENAI_API_KEY=openai-key\n')
    // The config file still decides: keep gives one to any command.
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), '[env]\nkeep = ["OPENAI_API_KEY"]\n')
    const kept = await world.hmm(['run', '--rm', 'sh', '-c', 'echo "openai=$OPENAI_API_KEY anthropic=$ANTHROPIC_API_KEY"'], {env})
    expect(kept.stdout).toBe('openai=openai-key anthropic=\n')
    await world.sh('rm ~/.config/hmm/config.toml')
  })

  it('has no HMM_REDIRECTED, which oclif removes before any command, for run and exec alike', async () => {
    const env = {...world.env, HMM_REDIRECTED: 'x'}
    const run = await world.hmm(['run', '-n', 'redirected', 'sh', '-c', 'echo "[$HMM_REDIRECTED]"'], {env})
    expect(run.stdout).toBe('[]\n')
    expect((await world.hmm(['exec', 'redirected', 'sh', '-c', 'echo "[$HMM_REDIRECTED]"'], {env})).stdout).toBe('[]\n')
    await world.hmm(['rm', '-f', 'redirected'])
  })

  it('is shown by hmm sandbox: the variables set now that the command would not get', async () => {
    const result = await world.hmm(['sandbox'], {env: {...world.env, GITHUB_TOKEN: 'x', SSH_AUTH_SOCK: '/x', ANTHROPIC_API_KEY: 'k'}})
    expect(result.stdout).toContain('environment: removes ANTHROPIC_API_KEY GITHUB_TOKEN SSH_AUTH_SOCK (')
  })

  it("applies the config file's env keep and remove", async () => {
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), '[env]\nkeep = ["GITHUB_TOKEN"]\nremove = ["MY_*"]\n')
    const env = {...world.env, GITHUB_TOKEN: 'ghp_kept', NPM_TOKEN: 'npm_secret', MY_SETTING: 'gone', OTHER: 'kept'}
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'echo "gh=$GITHUB_TOKEN npm=$NPM_TOKEN my=$MY_SETTING other=$OTHER"'], {env})
    expect(result.stdout).toBe('gh=ghp_kept npm= my= other=kept\n')
    await world.sh('rm ~/.config/hmm/config.toml')
  })

  it('commits and tags unsigned where the user signs with a key the sandbox hides, after what the environment already sets for git', async () => {
    const key = join(world.home, '.ssh', 'id_ed25519')
    world.write(key + '.pub', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHmmKeyHiddenFromTheSandbox000000000000000000 me\n')
    const config = world.write(
      join(world.home, 'signing.gitconfig'),
      `[user]\n\tname = World\n\temail = world@example.com\n\tsigningkey = ${key}.pub\n[gpg]\n\tformat = ssh\n[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n`,
    )
    const env = {...world.env, GIT_CONFIG_GLOBAL: config, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'From Env'}
    const script = 'git init -q r && cd r && git commit -q --allow-empty -m a && git tag -a -m t v1 && git log --format="%an %G? %s" && git tag -l'
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script], {env})
    expect(result.stderr).not.toContain('failed to write commit object')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('From Env N a\nv1\n')
  })

  it('has HMM_WORKSPACE and, when named, HMM_WORKSPACE_NAME; never forged ones', async () => {
    const env = {...world.env, HMM_WORKSPACE: 'forged', HMM_WORKSPACE_NAME: 'forged'}
    const named = await world.hmm(['run', '--rm', '-n', 'parser', 'sh', '-c', 'echo "$HMM_WORKSPACE $HMM_WORKSPACE_NAME"'], {env})
    expect(named.stdout).toBe(`${workspaceLine(named.stderr).id} parser\n`)
    const unnamed = await world.hmm(['run', '--rm', 'sh', '-c', 'echo "$HMM_WORKSPACE ${HMM_WORKSPACE_NAME-unset}"'], {env})
    expect(unnamed.stdout).toBe(`${workspaceLine(unnamed.stderr).id} unset\n`)
  })
})
