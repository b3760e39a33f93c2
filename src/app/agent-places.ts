// How a built-in agent's own places reach the sandbox (config.ts
// AgentKeeping): on Linux with the namespaces, its directory is a layer of
// the workspace, its login written through, its state file a copy kept
// with the workspace and its records of other projects out of sight;
// elsewhere only its sessions, records and login are written.
import {existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'
import type {Effective} from '../sandbox/config.js'
import {canonical, isWithin} from '../sandbox/paths.js'
import type {Bind, Platform} from '../sandbox/policy.js'
import {debug} from '../ui/errors.js'

/**
 * What the command may write of the settings' paths: the agent's
 * directories whole, as layers, where the namespaces can have them; else,
 * of each, only the places it keeps its sessions, records and login in
 * (the rest, its settings, hooks and own installation, read-only).
 */
export function agentPlaces(settings: Effective, platform: Platform, namespaces: boolean): {writable: string[]; layers?: string[]} {
  const agent = settings.agent
  if (!agent) return {writable: settings.write}
  if (platform === 'linux' && namespaces) return {writable: settings.write, layers: agent.layers}
  return {writable: [...settings.write.filter(path => !agent.layers.includes(path)), ...agent.inPlace]}
}

/**
 * What is bound over the agent's layers in the workspace whose directory is
 * `root`: its login, through; its state, a copy made the first time from
 * the user's (outside the sandbox, as the user) and kept, so the agent
 * finds what it wrote there again in `hmm exec`; and over its records of
 * every project (transcripts, prompts), the workspace's own, empty at
 * first and kept, so it sees no other project's. A record the user has not
 * got is written in the layer.
 */
export function agentBinds(settings: Effective, root: string, tree: string): Bind[] {
  const agent = settings.agent
  if (!agent) return []
  const copies = join(root, 'agent-state')
  const state = agent.state.map(file => {
    const copy = join(copies, basename(file))
    if (!existsSync(copy)) {
      mkdirSync(copies, {recursive: true, mode: 0o700})
      writeFileSync(copy, stateCopy(file, tree), {mode: 0o600})
    }
    return {source: copy, target: canonical(file)}
  })
  const records = agent.records.flatMap(record => {
    const user = statSync(record, {throwIfNoEntry: false})
    if (!user || !(user.isDirectory() || user.isFile())) return []
    const own = join(copies, agent.name, basename(record))
    mkdirSync(user.isDirectory() ? own : join(own, '..'), {recursive: true, mode: 0o700})
    if (user.isFile()) writeFileSync(own, '', {flag: 'a', mode: 0o600})
    return [{source: own, target: canonical(record)}]
  })
  const logins = agent.logins.filter(file => existsSync(file)).map(file => ({source: canonical(file), target: canonical(file)}))
  return [...logins, ...state, ...records]
}

/**
 * The workspace's first copy of the agent's state file (~/.claude.json),
 * less its entries for other projects: their MCP servers (tokens in
 * `env`), allowed tools and prompt histories are not the workspace's,
 * whose own entry the agent makes under the tree's path. What the user
 * set for every project (user-scope MCP servers, account) stays: the
 * agent starts those servers itself, with their env. A file that is not a
 * JSON object is not copied: the agent starts afresh.
 */
function stateCopy(file: string, tree: string): string {
  if (!existsSync(file)) return '{}\n'
  try {
    const state: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (typeof state !== 'object' || state === null || Array.isArray(state)) throw new Error('not an object')
    const {projects} = state as {projects?: unknown}
    if (typeof projects === 'object' && projects !== null) {
      const own = Object.entries(projects).filter(([path]) => isWithin(path, tree))
      Object.assign(state, {projects: Object.fromEntries(own)})
    }
    return `${JSON.stringify(state, null, 2)}\n`
  } catch (error) {
    debug(`${file} is not copied: ${(error as Error).message}`)
    return '{}\n'
  }
}
