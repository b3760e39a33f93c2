// Tools' update checks are off in the sandbox (issue 24, noise): a check
// that cannot write its state under ~/.config tells the agent to `sudo
// chown` it on every run, and a notice of a newer version is noise to an
// agent. hmm sets the variables that turn the checks off, unless the user
// set them. Real npm, against a registry on the loopback that offers a
// newer npm: no network needed.
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
let server: Server
let registry: string
const asked: string[] = []

beforeAll(async () => {
  world = new World('update-checks')
  world.file('f.txt', 'x\n')
  // A packument for each name asked: npm at a version far ahead, any other package at 1.0.0.
  server = createServer((request, response) => {
    const name = decodeURIComponent((request.url ?? '/').slice(1))
    asked.push(name)
    const version = name === 'npm' ? '999.0.0' : '1.0.0'
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({name, 'dist-tags': {latest: version}, versions: {[version]: {name, version, dist: {tarball: `${registry}${name}.tgz`}}}}))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterEach(context => {
  if (context.task.result?.state === 'fail') world.keepOnFailure()
})
afterAll(async () => {
  await new Promise(resolve => server.close(resolve))
  world.dispose()
})

/**
 * The world's environment as on a developer's machine: less what tells
 * tools they run in CI (npm skips its check there) and what npm set for
 * the tests' runner (npx: its cache, outside the world's home).
 */
function developerEnv(more: Record<string, string> = {}): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(world.env).filter(([name]) => !/^(CI|CONTINUOUS_INTEGRATION|BUILD_NUMBER|RUN_ID|GITHUB_ACTIONS|npm_.*)$/i.test(name)),
  )
  return {...env, npm_config_registry: registry, ...more}
}

describe('update checks in the sandbox', () => {
  it('are off: npm asks the registry for no newer npm and prints no notice; the variables are set', async () => {
    asked.length = 0
    const result = await world.hmm(['run', '--rm', 'npm', 'view', 'probe', 'version'], {env: developerEnv()})
    expect(result.exitCode, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toBe('1.0.0\n')
    expect(result.stderr).not.toContain('New major version of npm')
    expect(asked).toEqual(['probe'])
    const variables = await world.hmm(
      [
        'run',
        '--rm',
        'sh',
        '-c',
        'env | grep -E "^(NO_UPDATE_NOTIFIER|NPM_CONFIG_UPDATE_NOTIFIER|PIP_DISABLE_PIP_VERSION_CHECK|GH_NO_UPDATE_NOTIFIER)=" | sort; npm config get update-notifier',
      ],
      {env: developerEnv()},
    )
    expect(variables.stdout).toBe('GH_NO_UPDATE_NOTIFIER=1\nNO_UPDATE_NOTIFIER=1\nNPM_CONFIG_UPDATE_NOTIFIER=false\nPIP_DISABLE_PIP_VERSION_CHECK=1\nfalse\n')
  })

  it('stay as the user set them, in any case of the name', async () => {
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'echo "${NPM_CONFIG_UPDATE_NOTIFIER-unset}"; npm config get update-notifier'], {
      env: developerEnv({npm_config_update_notifier: 'true'}),
    })
    expect(result.stdout).toBe('unset\ntrue\n')
  })
})
