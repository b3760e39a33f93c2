// Setting up a checkout (README "Set up for development"): `npm install`
// builds better-sqlite3, from source where its prebuilt binary cannot be
// fetched from github.com, with node-gyp, which fetched Node's headers from
// nodejs.org. Where only the npm registry can be reached, the checkout's
// own node-gyp (scripts/node-gyp, a dev dependency, and .npmrc) takes the
// headers installed beside Node. A packed package of the project's own
// stands for better-sqlite3 (installed from a tarball as from the registry;
// a real build, seconds); nodejs.org is a port nothing listens on. The
// project lies outside the checkout: the install scripts' PATH holds every
// node_modules/.bin above them, the checkout's own node-gyp's too. No
// sandbox runs here, so /var/tmp is as good a place as any.
import {execa} from 'execa'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {PROJECT} from '../world.js'

const headers = join(dirname(dirname(process.execPath)), 'include', 'node', 'node_version.h')

let project: string | undefined
afterEach(() => {
  if (project) rmSync(project, {recursive: true, force: true})
})

function write(path: string, content: string): void {
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, content)
}

describe("a checkout's npm install", () => {
  it.skipIf(!existsSync(headers))('builds a native dependency with no network but the registry, from the headers beside Node', async () => {
    project = mkdtempSync('/var/tmp/hmm-setup-')
    const home = join(project, 'home')
    const checkout = join(project, 'checkout')
    // The checkout's own dev dependencies (file:) and its .npmrc, as the checkout has them.
    const devDependencies = Object.fromEntries(
      Object.entries((JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as {devDependencies: Record<string, string>}).devDependencies).filter(
        ([, spec]) => spec.startsWith('file:'),
      ),
    )
    for (const spec of Object.values(devDependencies))
      cpSync(join(PROJECT, spec.slice('file:'.length)), join(checkout, spec.slice('file:'.length)), {recursive: true})
    if (existsSync(join(PROJECT, '.npmrc'))) cpSync(join(PROJECT, '.npmrc'), join(checkout, '.npmrc'))
    const addon = join(project, 'addon')
    write(join(addon, 'package.json'), JSON.stringify({name: 'addon', version: '1.0.0', scripts: {install: 'node-gyp rebuild'}}))
    write(join(addon, 'binding.gyp'), JSON.stringify({targets: [{target_name: 'addon', sources: ['addon.c']}]}))
    write(
      join(addon, 'addon.c'),
      '#include <node_api.h>\nstatic napi_value init(napi_env env, napi_value exports) { return exports; }\nNAPI_MODULE(NODE_GYP_MODULE_NAME, init)\n',
    )
    // As from a shell: not the settings of the npm that started the tests (npx passes its config on, nodedir too).
    const shell = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_OPTIONS)/i.test(key)))
    const env = {
      ...shell,
      HOME: home,
      npm_config_disturl: 'http://127.0.0.1:9/',
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    }
    await execa('npm', ['pack', '--pack-destination', project], {cwd: addon, env, extendEnv: false})
    write(
      join(checkout, 'package.json'),
      JSON.stringify({name: 'proj', version: '1.0.0', dependencies: {addon: `file:${join(project, 'addon-1.0.0.tgz')}`}, devDependencies}),
    )
    const result = await execa('npm', ['install'], {cwd: checkout, env, extendEnv: false, reject: false, all: true})
    expect(result.exitCode, result.all).toBe(0)
    expect(existsSync(join(checkout, 'node_modules', 'addon', 'build', 'Release', 'addon.node'))).toBe(true)
  })
})
