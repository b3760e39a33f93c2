// The files git reads when hmm runs it outside the sandbox for an origin:
// the origin's repository (its .git, its git directory and a linked
// worktree's common one: config, hooks, info/attributes), the user's
// global and the system's config, and each file their settings name
// (includes, core.excludesFile, core.attributesFile), made or not yet.
//
// Security: whoever writes one of these decides what that git runs
// (core.pager at hmm diff, gpg.program at hmm merge's commit, a diff or
// merge driver); app/grants.ts refuses a sandbox that could. Git
// runs here in the origin, on the user's own files, listing settings only.
import {existsSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {settingPath} from './credentials.js'
import {git, nulPairs} from './git.js'
import {gitDirsOf} from './top.js'

export interface FilesGitReads {
  /** The origin's repository: its `.git` (made or not: git finds one made there), and the git directories it leads to. */
  repository: string[]
  /** Config files and what they name. */
  configuration: string[]
}

/** Settings whose value is a file git reads, and those that include one. */
const NAMES_A_FILE = /^core\.(excludesfile|attributesfile)$/
const INCLUDES_A_FILE = /^include(if\..*)?\.path$/

/** What git outside reads for `origin` (canonical), as the user (`env`) runs it. */
export async function filesGitReads(origin: string, env: NodeJS.ProcessEnv = process.env): Promise<FilesGitReads> {
  const home = env.HOME || homedir()
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config')
  const cwd = existsSync(origin) ? origin : '/'
  // Where git looks whether they exist or not (git-config(1), FILES): the XDG directory holds its ignore and attributes too.
  const configuration = [join(home, '.gitconfig'), join(xdg, 'git'), '/etc/gitconfig']
  const listed = await git(['config', '--list', '--show-origin', '-z'], {cwd, okStatuses: [128]})
  for (const [from, entry] of nulPairs(listed.stdout)) {
    // Only files: hmm's own -c settings show as `command line:`.
    if (!from.startsWith('file:')) continue
    const file = resolve(cwd, from.slice('file:'.length))
    configuration.push(file)
    const newline = entry.indexOf('\n')
    if (newline < 0) continue
    const [key, value] = [entry.slice(0, newline), entry.slice(newline + 1)]
    // An include's path is from its file's directory; core.excludesFile's from where git runs.
    const named = INCLUDES_A_FILE.test(key) ? settingPath(value, dirname(file), home) : NAMES_A_FILE.test(key) ? settingPath(value, cwd, home) : undefined
    if (named) configuration.push(named)
  }
  return {repository: [join(origin, '.git'), ...gitDirsOf(origin)], configuration: [...new Set(configuration)]}
}
