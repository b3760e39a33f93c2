// hmm's private git directory for one workspace (<data>/<id>/git): a bare
// repository whose config hmm writes, used to record and compare trees of
// the workspace without ever using the workspace's own `.git`.
//
// Its objects are private (new blobs never land in the origin's repository);
// for git origins the origin's objects are reachable through alternates, so
// nothing is copied. System and global git config are switched off for it:
// no filter, diff driver or fsmonitor of anyone's can run on the tree.
import {appendFileSync, lstatSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {HmmError} from '../ui/errors.js'
import {git, gitLine} from './git.js'
import {objectFormatOf} from './index-trust.js'
import {unrecordableRepositories} from './nested.js'

export interface PrivateRepo {
  gitDir: string
  /** Index describing the workspace tree (kept between diffs, so unchanged files are not re-read). */
  index: string
}

export function privateRepo(gitDir: string): PrivateRepo {
  return {gitDir, index: join(gitDir, 'index')}
}

/**
 * The settings git init and hmm write in the private repository's config
 * (section.key, lower case). None of them runs anything or reads a file
 * that does: anything else in it was put there by something other than hmm.
 */
const KNOWN_SETTINGS = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'core.fsmonitor',
  'core.untrackedcache',
  'core.quotepath',
  'core.excludesfile',
  'gc.auto',
  'extensions.objectformat',
  'extensions.refstorage',
])

/**
 * What in the private repository is not as hmm made it, in a few words, or
 * undefined. Read as plain text in git's simplest syntax: a line git would
 * read otherwise (a subsection, an include, a continued value) is itself
 * unknown.
 */
function changedByOthers(gitDir: string): string | undefined {
  const config = join(gitDir, 'config')
  if (!lstatSync(config, {throwIfNoEntry: false})?.isFile()) return 'its config is not a file'
  for (const name of ['commondir', 'config.worktree', 'hooks', join('info', 'attributes')]) {
    if (lstatSync(join(gitDir, name), {throwIfNoEntry: false})) return `it holds ${name}`
  }
  let section = ''
  for (const line of readFileSync(config, 'utf8').split('\n')) {
    const header = /^\s*\[([A-Za-z0-9-]+)\]\s*$/.exec(line)
    if (header) {
      section = header[1].toLowerCase()
      continue
    }
    if (/^\s*$/.test(line)) continue
    const setting = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*=(.*?)(\\*)$/.exec(line)
    const key = setting && section ? `${section}.${setting[1].toLowerCase()}` : undefined
    const continued = setting !== null && setting[3].length % 2 === 1
    // The one known setting whose value can name a program (hmm's own -c turns it off as well).
    const runs = key === 'core.fsmonitor' && setting![2].trim() !== 'false'
    if (!key || !KNOWN_SETTINGS.has(key) || continued || runs) return `its config has ${JSON.stringify(line.slice(0, 60))}`
  }
  return undefined
}

/**
 * Environment for git commands on the private repository, which is checked
 * first to be as hmm made it: it lies in the data directory, which the
 * command may never write, and should a bug of another layer let it, git
 * outside the sandbox must not run what it put in the config
 * (core.alternateRefsCommand and the like: attacker's review 10).
 */
export function privateEnv(repo: PrivateRepo): Record<string, string> {
  const changed = changedByOthers(repo.gitDir)
  if (changed) {
    const id = basename(dirname(repo.gitDir))
    throw new HmmError(
      `workspace ${id}'s private repository ${repo.gitDir} was changed by something other than hmm (${changed}), so hmm runs no git on it: hmm rm -f ${id} removes the workspace`,
    )
  }
  return {
    GIT_DIR: repo.gitDir,
    GIT_INDEX_FILE: repo.index,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  }
}

/**
 * What git reads for the private repository outside it: the object
 * directories it borrows (alternates) and the user's excludes file. A
 * reader confined to a composed home (platform/confined.ts) is shown them.
 */
export function privateRepoSources(gitDir: string): string[] {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return ''
    }
  }
  const alternates = read(join(gitDir, 'objects', 'info', 'alternates'))
    .split('\n')
    .filter(line => line.startsWith('/'))
  const excludes = /^\s*excludesFile = "((?:[^"\\]|\\.)*)"$/m.exec(read(join(gitDir, 'config')))?.[1]
  const excludesFile = excludes?.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
  return [...alternates, ...(excludesFile ? [excludesFile] : [])]
}

/**
 * hmm's settings for the private repository, appended to what `git init`
 * wrote (later keys win): a work tree is always given explicitly, nothing
 * may start a daemon or keep stat caches of its own, no automatic gc.
 */
const PRIVATE_CONFIG = `[core]
\tbare = false
\tfsmonitor = false
\tuntrackedCache = false
\tquotePath = true
[gc]
\tauto = 0
`

/** A value in git's config file syntax: quoted, so any path reads back as it was. */
function configValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`
}

export interface OriginSettings {
  /** The origin's object directory, borrowed through alternates. */
  objects: string
  objectFormat: string
  /** The contents of the origin's .git/info/exclude. */
  excludes: string[]
  /** The user's core.excludesFile as the origin's git resolves it, if set. */
  excludesFile?: string
}

export async function createPrivateRepo(gitDir: string, origin?: OriginSettings): Promise<PrivateRepo> {
  mkdirSync(gitDir, {recursive: true})
  const repo = privateRepo(gitDir)
  // --template= : no hooks or other template files of the user's copied in.
  // The object format must be the origin's, whose objects it borrows.
  const format = origin ? [`--object-format=${origin.objectFormat}`] : []
  await git(['init', '--bare', '--quiet', '--template=', ...format, gitDir], {
    cwd: gitDir,
    env: {GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null'},
  })
  // The fork tree was written with the user's excludes file, so every later tree must be too.
  const excludesFile = origin?.excludesFile ? `[core]\n\texcludesFile = ${configValue(origin.excludesFile)}\n` : ''
  appendFileSync(join(gitDir, 'config'), PRIVATE_CONFIG + excludesFile)
  const originObjects = origin?.objects
  const originExcludes = origin?.excludes
  mkdirSync(join(gitDir, 'objects', 'info'), {recursive: true})
  if (originObjects) writeFileSync(join(gitDir, 'objects', 'info', 'alternates'), `${originObjects}\n`)
  if (originExcludes?.length) {
    mkdirSync(join(gitDir, 'info'), {recursive: true})
    writeFileSync(join(gitDir, 'info', 'exclude'), originExcludes.join('\n') + '\n')
  }
  return repo
}

/**
 * Records a directory's files in the private index by hash and stat data
 * only (`update-index --info-only`): no object is written for them, so this
 * costs reading the files, not storing them again. Then writes the tree.
 */
export async function hashTreeOf(repo: PrivateRepo, workTree: string): Promise<string> {
  const env = {...privateEnv(repo), GIT_WORK_TREE: workTree}
  const listed = (await git(['ls-files', '-z', '--others', '--exclude-standard'], {cwd: workTree, env})).stdout.split('\0').filter(Boolean)
  // A nested repository is listed as "dir/"; it is recorded as git records it, by its HEAD (one git cannot record: left out).
  const unrecordable = new Set(unrecordableRepositories(workTree, listed, objectFormatOf(repo.index)))
  const paths = listed.map(path => path.replace(/\/$/, '')).filter(path => !unrecordable.has(path))
  if (paths.length > 0) {
    await git(['update-index', '--add', '--info-only', '-z', '--stdin'], {cwd: workTree, env, input: paths.join('\0') + '\0'})
  }
  return gitLine(['write-tree', '--missing-ok'], {cwd: workTree, env})
}
