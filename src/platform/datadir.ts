// Where hmm keeps its registry and workspaces (SPEC "Files").
import {homedir} from 'node:os'
import {join, resolve} from 'node:path'

export function dataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.HMM_HOME) return resolve(env.HMM_HOME)
  if (env.XDG_DATA_HOME) return resolve(env.XDG_DATA_HOME, 'hmm')
  const home = env.HOME || homedir()
  return platform === 'darwin' ? join(home, 'Library', 'Application Support', 'hmm') : join(home, '.local', 'share', 'hmm')
}

export function registryPath(data: string): string {
  return join(data, 'registry.sqlite')
}
