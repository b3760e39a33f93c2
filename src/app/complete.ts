// Shell completion: what may come at the cursor, one candidate a line,
// for the scripts `hmm completion bash|zsh|fish` prints (completion-scripts.ts).
// Runs on the listing path (list.ts, without oclif): commands and flags come
// from oclif's manifest, workspaces from the registry.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {dataDir} from '../platform/index.js'
import {workingOrigin} from '../workspaces/context.js'
import {Store} from '../workspaces/store.js'

interface ManifestCommand {
  hidden?: boolean
  args: Record<string, unknown>
  flags: Record<string, {name: string; char?: string; type: 'boolean' | 'option'}>
}

type Manifest = Record<string, ManifestCommand>

/** oclif.manifest.json, found upwards from this module (dist/app/complete.js, or dist/list.bundle.cjs once bundled). */
function readManifest(): Manifest {
  for (const up of ['../..', '..']) {
    const path = join(import.meta.dirname, up, 'oclif.manifest.json')
    if (existsSync(path)) return (JSON.parse(readFileSync(path, 'utf8')) as {commands: Manifest}).commands
  }
  return {}
}

/** Where the command takes workspaces: its first argument, or (rm) every one. */
function takesWorkspace(id: string, command: ManifestCommand, positional: number): boolean {
  if (id === 'exec') return positional === 0
  if ('workspaces' in command.args) return true
  return 'workspace' in command.args && positional === 0
}

/** Names and IDs of the working directory's workspaces. */
function workspaceKeys(): string[] {
  const store = Store.openExisting(dataDir())
  if (!store) return []
  try {
    return store.list(workingOrigin()).flatMap(row => (row.name ? [row.name, row.id] : [row.id]))
  } finally {
    store.close()
  }
}

/** The candidates for the last word, given the words after `hmm` before it. */
export function completions(words: string[], manifest: Manifest = readManifest()): string[] {
  const before = words.slice(0, -1)
  const current = words.at(-1) ?? ''
  const starting = (candidates: string[]) => candidates.filter(candidate => candidate.startsWith(current))
  const visible = Object.keys(manifest).filter(id => !manifest[id].hidden)
  if (before.length === 0) return starting(visible)
  const id = before[0]
  const command = manifest[id]
  if (!command) return []
  const flags = Object.values(command.flags)
  const flagNamed = (word: string) => flags.find(flag => word === `--${flag.name}` || word === `-${flag.char}`)
  if (current.startsWith('-')) return starting(flags.flatMap(flag => [`--${flag.name}`, ...(flag.char ? [`-${flag.char}`] : [])]))
  if (flagNamed(before.at(-1)!)?.type === 'option') return [] // the flag's value: the shell's own completion
  if (id === 'help') return before.length === 1 ? starting(visible) : []
  if (id === 'completion') return before.length === 1 ? starting(['bash', 'fish', 'zsh']) : []
  let positional = 0
  for (let index = 1; index < before.length; index++) {
    const flag = flagNamed(before[index])
    if (flag?.type === 'option') index++
    else if (!before[index].startsWith('-')) positional++
  }
  return takesWorkspace(id, command, positional) ? starting(workspaceKeys()) : []
}
