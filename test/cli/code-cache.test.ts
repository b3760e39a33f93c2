// bin/run.js keeps V8's code cache of each bundle beside it. V8 checks only
// the source's length, so a cache that is not for this very bundle must be
// ignored and made again, never used.
import {execa} from 'execa'
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {PROJECT, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/**
 * Runs a variant of the bundle (source on stdin, compiled under the
 * bundle's name) as bin/run.js would, then writes V8's cache of it, with
 * a key that is not the bundle's, where the bundle's cache goes.
 */
const VARIANT_CACHE = `
const Module = require('node:module'), vm = require('node:vm'), fs = require('node:fs'), path = require('node:path')
const [file, cacheFile] = process.argv.slice(2)
const script = new vm.Script(Module.wrap(fs.readFileSync(0, 'utf8')), {filename: file})
const m = new Module(file, module)
m.filename = file
m.paths = Module._nodeModulePaths(path.dirname(file))
script.runInThisContext()(m.exports, id => m.require(id), m, file, path.dirname(file))
m.exports.listMain(['--json'])
const key = Buffer.from(fs.statSync(file).size + ' 1 2\\n')
fs.writeFileSync(cacheFile, Buffer.concat([key, script.createCachedData()]))
`

const bundle = join(PROJECT, 'dist', 'list.bundle.cjs')
const cache = `${bundle}.cache`
const keyOf = () => {
  const stat = statSync(bundle)
  return `${stat.size} ${stat.mtimeMs} ${stat.ino}\n`
}

describe("the bundles' code cache", () => {
  it('is made for this very bundle, and one made for another is ignored and made again', async () => {
    world = new World('code-cache')
    expect(await world.hmm([])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    expect(readFileSync(cache).subarray(0, keyOf().length).toString()).toBe(keyOf())
    // A real cache of another bundle of the same length, which V8 alone would take: its JSON ends in XX, not a newline.
    const source = readFileSync(bundle, 'utf8')
    const variant = source.replace('printableJson(objects, 2) + "\\n"', 'printableJson(objects, 2) + "XX"')
    expect(variant.length).toBe(source.length)
    expect(variant).not.toBe(source)
    const made = world.write(join(world.home, 'variant-cache.cjs'), VARIANT_CACHE)
    await execa(process.execPath, [made, bundle, cache], {input: variant, env: world.env, extendEnv: false, cwd: world.origin})
    expect(readFileSync(cache).length).toBeGreaterThan(1000)
    expect(await world.hmm(['ls', '--json'])).toEqual({exitCode: 0, stdout: '[]\n', stderr: ''})
    expect(readFileSync(cache).subarray(0, keyOf().length).toString()).toBe(keyOf())
    // A cache V8 rejects (right key, bytes of nothing V8 made): used for nothing, made again.
    writeFileSync(cache, Buffer.concat([Buffer.from(keyOf()), Buffer.alloc(4096, 7)]))
    expect(await world.hmm([])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    expect(readFileSync(cache).length).not.toBe(keyOf().length + 4096)
  })
})
