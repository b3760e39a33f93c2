// Writes oclif.manifest.json, so that running a command imports only that
// command's module instead of every command file (start-up time).
import {rmSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Config} from '@oclif/core'

const root = fileURLToPath(new URL('..', import.meta.url))
const target = new URL('../oclif.manifest.json', import.meta.url)
rmSync(target, {force: true}) // oclif would read a stale one instead of the commands
const config = await Config.load({root})
const plugin = config.plugins.get(config.name)
if (!plugin || Object.keys(plugin.manifest.commands).length === 0) {
  console.error('hmm: could not build the oclif manifest: no commands found in dist/commands')
  process.exit(1)
}
writeFileSync(target, JSON.stringify(plugin.manifest) + '\n')
