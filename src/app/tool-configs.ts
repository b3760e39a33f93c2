// Package managers' user config files that mix settings and logins: yarn's,
// pip's, cargo's and Maven's. With the namespaces the command reads a copy
// of each without the logins (config-cleaners.ts), bound over the user's,
// as npm's is (npm-config.ts); without them the files stay unreadable,
// pip's read through PIP_CONFIG_FILE (unmounted-copies.ts). Cargo's
// credentials(.toml) stays hidden whole.
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {canonical, unique} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'
import {cleanedCopy} from './cleaned-copy.js'
import {cleanCargoConfig, cleanMavenSettings, cleanPipConf, cleanYarnrc, cleanYarnrcYml} from './config-cleaners.js'

interface ToolConfig {
  /** Where the tool reads its user config, as it finds it. */
  files: (env: NodeJS.ProcessEnv, home: string) => (string | undefined)[]
  /** The file without its logins; undefined when it cannot be read as its tool reads it: then it is shown empty. */
  clean: (text: string) => string | undefined
}

/** Where Python version and environment managers keep each prefix, beneath the home. */
const PYTHON_PREFIXES = ['.pyenv/versions', '.local/share/virtualenvs', '.local/pipx/venvs', '.local/share/pipx/venvs', '.local/share/uv/python']

/**
 * pip's site config (`<sys.prefix>/pip.conf`) of every Python and
 * environment a manager keeps in the home: shown with its toolchain, and
 * read by pip there whichever the command runs.
 */
function pipSiteConfigs(home: string): string[] {
  return PYTHON_PREFIXES.flatMap(rel => {
    const dir = join(home, rel)
    try {
      return readdirSync(dir).map(prefix => join(dir, prefix, 'pip.conf'))
    } catch {
      return []
    }
  })
}

/** pip's own config files of the user's: the one the environment names, the XDG one, the legacy one. */
export function pipUserConfigs(env: NodeJS.ProcessEnv, home: string): string[] {
  const named = env.PIP_CONFIG_FILE ? [env.PIP_CONFIG_FILE] : []
  return [...named, join(env.XDG_CONFIG_HOME || join(home, '.config'), 'pip', 'pip.conf'), join(home, '.pip', 'pip.conf')]
}

const TOOL_CONFIGS: ToolConfig[] = [
  {files: (_, home) => [join(home, '.yarnrc')], clean: cleanYarnrc},
  {files: (_, home) => [join(home, '.yarnrc.yml')], clean: cleanYarnrcYml},
  {files: (env, home) => [...pipUserConfigs(env, home), ...pipSiteConfigs(home)], clean: cleanPipConf},
  {
    files: (env, home) => [join(env.CARGO_HOME || join(home, '.cargo'), 'config.toml'), join(env.CARGO_HOME || join(home, '.cargo'), 'config')],
    clean: cleanCargoConfig,
  },
  {files: (_, home) => [join(home, '.m2', 'settings.xml')], clean: cleanMavenSettings},
]

const isFile = (path: string) => statSync(path, {throwIfNoEntry: false})?.isFile() === true

/**
 * The config files a cleaned copy is made of, as the tools name them: those
 * that are regular files (or links to one). Only these may the policy stop
 * hiding and the composed home show (app/session.ts).
 */
export function cleanedToolConfigs(env: NodeJS.ProcessEnv, home: string): string[] {
  return unique(TOOL_CONFIGS.flatMap(tool => tool.files(env, home).filter((file): file is string => !!file && isFile(file))))
}

/** Larger files are not configs people write by hand: none is shown. */
const MAX_BYTES = 1 << 20

/**
 * The cleaned copies of `files` (cleanedToolConfigs' less what the config
 * file hides), made in the workspace's directory `root` for this command,
 * each bound over the file it cleans (where its link leads).
 */
export function toolConfigBinds(root: string, env: NodeJS.ProcessEnv, home: string, files: string[]): Bind[] {
  const binds: Bind[] = []
  const done = new Set<string>()
  for (const tool of TOOL_CONFIGS) {
    for (const file of tool.files(env, home)) {
      if (!file || !files.includes(file) || !isFile(file) || done.has(canonical(file))) continue
      const target = canonical(file)
      done.add(target)
      const text = statSync(target).size > MAX_BYTES ? '' : readFileSync(target, 'utf8')
      binds.push(cleanedCopy(join(root, 'configs'), String(binds.length), tool.clean(text) ?? '', target))
    }
  }
  return binds
}
