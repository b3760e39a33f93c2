// How a built-in agent's own places reach the sandbox (config.ts
// AgentKeeping): on Linux with the namespaces, its directory is a layer of
// the workspace, its login written through and its state file a copy kept
// with the workspace; elsewhere what configures code at its start is
// read-only.
import {copyFileSync, existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'
import type {Effective} from '../sandbox/config.js'
import {canonical} from '../sandbox/paths.js'
import type {Bind, Platform} from '../sandbox/policy.js'

/**
 * The agent's directories as layers where the namespaces can have them,
 * else what in them configures code as read-only.
 */
export function agentPlaces(settings: Effective, platform: Platform, namespaces: boolean): {layers?: string[]; readOnly?: string[]} {
  const agent = settings.agent
  if (!agent) return {}
  return platform === 'linux' && namespaces ? {layers: agent.layers} : {readOnly: agent.code}
}

/**
 * What is bound over the agent's layers in the workspace whose directory is
 * `root`: its login, through; its state, a copy made the first time from
 * the user's (outside the sandbox, as the user) and kept, so the agent
 * finds what it wrote there again in `hmm exec`.
 */
export function agentBinds(settings: Effective, root: string): Bind[] {
  const agent = settings.agent
  if (!agent) return []
  const copies = join(root, 'agent-state')
  const state = agent.state.map(file => {
    const copy = join(copies, basename(file))
    if (!existsSync(copy)) {
      mkdirSync(copies, {recursive: true, mode: 0o700})
      if (existsSync(file)) copyFileSync(file, copy)
      else writeFileSync(copy, '{}\n', {mode: 0o600})
    }
    return {source: copy, target: canonical(file)}
  })
  const logins = agent.logins.filter(file => existsSync(file)).map(file => ({source: canonical(file), target: canonical(file)}))
  return [...logins, ...state]
}
