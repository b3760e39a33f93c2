// GitHub, for `hmm pr`: which repository a remote URL names, and pull
// requests through the user's own `gh`.
//
// Security: `gh` is the user's program with the user's credentials; it runs
// in the origin with an argv (never a shell), and the title and body it is
// given — commit messages from the workspace, untrusted text — are passed
// as `--flag=value` so no message can be taken for an option.
import {accessSync, constants} from 'node:fs'
import {delimiter, join} from 'node:path'
import {execa} from 'execa'
import {programPath} from '../platform/programs.js'
import {HmmError} from '../ui/errors.js'
import {scrubbedEnv} from './git.js'

export interface GitHubRepo {
  owner: string
  name: string
}

const PART = '([A-Za-z0-9_.-]+)'
const GITHUB_URLS = [
  // https://github.com/O/N(.git), also with user@ and http
  new RegExp(`^https?://(?:[^@/]+@)?github\\.com(?::443)?/${PART}/${PART}/?$`, 'i'),
  // git@github.com:O/N(.git)
  new RegExp(`^(?:[^@/]+@)?github\\.com:/?${PART}/${PART}/?$`, 'i'),
  // ssh://git@github.com(:22)/O/N(.git), git://github.com/O/N
  new RegExp(`^(?:ssh|git|git\\+ssh)://(?:[^@/]+@)?github\\.com(?::\\d+)?/${PART}/${PART}/?$`, 'i'),
]

/** The GitHub repository a remote URL names, if it names one. */
export function githubRepo(url: string): GitHubRepo | undefined {
  for (const pattern of GITHUB_URLS) {
    const match = pattern.exec(url.trim())
    if (match) {
      const name = match[2].replace(/\.git$/i, '')
      if (name === '' || match[1] === '.' || match[1] === '..' || name === '.' || name === '..') return undefined
      return {owner: match[1], name}
    }
  }
  return undefined
}

function urlPath(branch: string): string {
  return branch.split('/').map(encodeURIComponent).join('/')
}

export function compareUrl(repo: GitHubRepo, base: string, head: string): string {
  return `https://github.com/${repo.owner}/${repo.name}/compare/${urlPath(base)}...${urlPath(head)}?expand=1`
}

/** Whether `gh` is on PATH (an executable file). */
export function hasGh(path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some(dir => {
    if (dir === '') return false
    try {
      accessSync(join(dir, 'gh'), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

async function gh(args: string[], cwd: string): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const result = await execa(programPath('gh') ?? 'gh', args, {cwd, env: scrubbedEnv(), extendEnv: false, reject: false, stdin: 'ignore'})
  if ((result as {code?: string}).code === 'ENOENT') throw new HmmError('gh could not be started')
  return {exitCode: result.exitCode ?? 1, stdout: String(result.stdout), stderr: String(result.stderr)}
}

function lastUrl(text: string): string | undefined {
  return text
    .split('\n')
    .map(line => line.trim())
    .filter(line => /^https?:\/\/\S+$/.test(line))
    .at(-1)
}

export interface PullRequest {
  repo: GitHubRepo
  base: string
  head: string
  title: string
  body: string
  draft: boolean
}

/** The URL of the open pull request from `head`, opening one if there is none. */
export async function ensurePullRequest(request: PullRequest, cwd: string): Promise<string> {
  const repoArg = `--repo=${request.repo.owner}/${request.repo.name}`
  const existing = await gh(['pr', 'view', request.head, repoArg, '--json', 'url', '--jq', '.url'], cwd)
  const found = existing.exitCode === 0 ? lastUrl(existing.stdout) : undefined
  if (found) return found
  const created = await gh(
    [
      'pr',
      'create',
      repoArg,
      `--base=${request.base}`,
      `--head=${request.head}`,
      `--title=${request.title}`,
      `--body=${request.body}`,
      ...(request.draft ? ['--draft'] : []),
    ],
    cwd,
  )
  const url = created.exitCode === 0 ? lastUrl(created.stdout) : undefined
  if (!url) {
    const reason = created.stderr.trim().split('\n').at(-1) || created.stdout.trim().split('\n').at(-1) || `exit status ${created.exitCode}`
    throw new HmmError(`gh could not open a pull request for ${request.head}: ${reason}`)
  }
  return url
}
