// What a checkout of a workspace's commits would write into the origin's
// files, against what `hmm diff` shows (SPEC merge: "never bring in a change
// that hmm diff does not show").
//
// hmm diff and hmm log -p show the commits' blobs. A checkout writes a blob
// through the attributes that apply to its path: a filter's smudge (git-lfs
// fetching content from wherever .lfsconfig says, outside the sandbox), a
// working-tree-encoding (text shown as other characters than it is written
// in), ident, or end-of-line conversion. So where the commits change what
// those attributes make of a path, into something other than the blob
// itself, the bytes merge writes are not the ones shown, and merge refuses;
// so it does when they change .lfsconfig, which tells git-lfs where to fetch
// from. Attributes that stop a conversion are taken: then the bytes written
// are the blob shown. Line ends the origin's own attributes and settings ask
// for are taken (`*.bat text eol=crlf`): git writes the user's own commits so.
// Those the commits' attribute files bring are not: a CR before each line end
// changes what a script does (`\` then CRLF continues no line), unseen.
//
// The attributes are asked of git itself (macros such as `binary` and the
// user's own attribute files included), as the origin's repository sees them
// with the base's and the tip's trees as its index: nothing is checked out
// and no filter runs.
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, git, gitLine, NOT_UTF8} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

/** The attributes that make a checkout write other bytes than the blob. */
const ATTRIBUTES = ['filter', 'working-tree-encoding', 'ident', 'text', 'eol', 'crlf']

/** git-lfs reads this at the top of the repository only. */
const LFS_CONFIG = '.lfsconfig'

/** The user's end-of-line settings, as the origin's git reads them. */
interface EolSettings {
  autocrlf: 'true' | 'false' | 'input'
  /** Whether core.eol (or the platform, where unset) asks for CRLF. */
  eolCrlf: boolean
}

/** What hmm apply's git reads: hmm's private repository, none of the user's settings. */
const NO_EOL_SETTINGS: EolSettings = {autocrlf: 'false', eolCrlf: false}

async function eolSettings(origin: string): Promise<EolSettings> {
  const get = async (key: string) => (await git(['config', '--get', key], {cwd: origin, okStatuses: [1]})).stdout.trim().toLowerCase()
  const [autocrlf, eol] = await Promise.all([get('core.autocrlf'), get('core.eol')])
  return {
    autocrlf: autocrlf === 'input' ? 'input' : ['true', 'yes', 'on', '1'].includes(autocrlf) ? 'true' : 'false',
    eolCrlf: eol === 'crlf' || (eol !== 'lf' && process.platform === 'win32'),
  }
}

/** Whether git would write a path with these attributes with CRLF line ends (convert.c's convert_attrs and output_eol). */
function writesCrlf(states: Map<string, string>, settings: EolSettings): boolean {
  const action = (value: string | undefined) =>
    value === 'set' ? 'text' : value === 'unset' ? 'binary' : value === 'input' ? 'input' : value === 'auto' ? 'auto' : undefined
  const kind = action(states.get('text')) ?? action(states.get('crlf'))
  if (kind === 'binary') return false
  const eol = states.get('eol')
  if (eol === 'lf' || eol === 'crlf') return eol === 'crlf'
  if (kind === 'input') return false
  if (kind === undefined) return settings.autocrlf === 'true'
  // text or auto: git's text_eol_is_crlf.
  return settings.autocrlf === 'true' || (settings.autocrlf === 'false' && settings.eolCrlf)
}

/** The conversion of CRLF line ends, in what `conversion` returns. */
const CRLF = 'crlf'

/** What a checkout makes of a path's blob, '' for nothing: the bytes written are the blob's. `filters`: whether git knows the user's filter drivers. */
function conversion(states: Map<string, string>, settings: EolSettings, filters: boolean): string {
  const filter = filters ? states.get('filter') : undefined
  const encoding = states.get('working-tree-encoding')
  return [
    // `filter` set or unset names no driver; any other value may name one the user configured.
    filter && !['set', 'unset', 'unspecified'].includes(filter) ? `filter=${filter}` : '',
    // Any encoding given (even set or unset, which make git stop) changes what checkout does.
    encoding && encoding !== 'unspecified' ? `working-tree-encoding=${encoding}` : '',
    states.get('ident') === 'set' ? 'ident' : '',
    writesCrlf(states, settings) ? CRLF : '',
  ]
    .filter(Boolean)
    .join(' ')
}

/** A conversion but for line ends: what is refused even where the user's own attributes ask for it. */
const beyondLineEnds = (made: string | undefined) => (made ?? '').split(' ').filter(part => part !== '' && part !== CRLF)

/** Where git is asked about attributes: its directory and environment, and the tree whose attribute files count (undefined: the work tree's). */
interface AttributeWorld {
  cwd: string
  env: Record<string, string>
  tree?: string
}

/** Each path's conversion on checkout (`paths`: NUL-terminated) in that world. */
async function conversionsOf(
  workspace: Workspace,
  world: AttributeWorld,
  {paths, settings, filters = true}: {paths: string; settings: EolSettings; filters?: boolean},
): Promise<Map<string, string>> {
  const index = join(workspace.gitDir, `index.attributes-${world.tree ?? 'files'}`)
  rmSync(index, {force: true})
  try {
    if (world.tree !== undefined) {
      const env = privateEnv(privateRepo(workspace.gitDir))
      await git(['read-tree', world.tree], {cwd: workspace.gitDir, env: {...env, GIT_INDEX_FILE: index}})
    }
    // --cached: the attribute files of the index (the tree), not those of the work tree.
    const checked = await git(['check-attr', ...(world.tree !== undefined ? ['--cached'] : []), '--stdin', '-z', ...ATTRIBUTES], {
      cwd: world.cwd,
      env: {...world.env, GIT_INDEX_FILE: index},
      input: paths,
    })
    // `<path>\0<attribute>\0<state>\0` for each path and attribute.
    const fields = checked.stdout.split('\0')
    const states = new Map<string, Map<string, string>>()
    for (let at = 0; at + 2 < fields.length; at += 3) {
      const [path, attribute, state] = fields.slice(at, at + 3)
      if (!states.has(path)) states.set(path, new Map())
      states.get(path)!.set(attribute, state)
    }
    return new Map([...states].map(([path, pathStates]) => [path, conversion(pathStates, settings, filters)]))
  } finally {
    rmSync(index, {force: true})
  }
}

/** The origin's repository, config and attribute files, with `tree` as the index whose attribute files count. */
function originWorld(workspace: Workspace, origin: string, tree: string): AttributeWorld {
  return {cwd: origin, env: {GIT_OBJECT_DIRECTORY: join(workspace.gitDir, 'objects')}, tree}
}

const isAttributeFile = (path: string) => path === '.gitattributes' || path.endsWith('/.gitattributes')

/** What a checkout of the commits up to `tip` would write otherwise than hmm diff shows, both lists sorted. */
export interface CheckoutConversions {
  /**
   * The .gitattributes files changed, when they make some path of the tip
   * written otherwise than before and otherwise than its blob; .lfsconfig
   * when changed.
   */
  attributeFiles: string[]
  /** The paths the commits change that git converts as it writes them (the origin's filters, encodings, ident; not its line ends). */
  converted: string[]
  /** With attribute files: whether hmm apply would write the files the commits write as shown (it runs no filter), or refuse them too (applyConversions). */
  applyTakes: boolean
}

/** What checking out the commits up to `tip` in the origin would write otherwise than hmm diff shows them; `now`: the workspace's files (treeNow). */
export async function checkoutConversions(workspace: Workspace, origin: string, tip: string, now: string): Promise<CheckoutConversions> {
  const onPrivate = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const base = workspace.row.headCommit ?? (await gitLine(['mktree'], {...onPrivate, input: ''}))
  const changedPaths = async (...filter: string[]) =>
    (await git(['diff-tree', ...ALL_GITLINKS, '-r', '-z', '--no-renames', '--name-only', ...filter, base, tip], onPrivate)).stdout.split('\0').filter(Boolean)
  // Every path changed counts for the attribute files; those not deleted are written.
  const [changed, written] = await Promise.all([changedPaths(), changedPaths('--diff-filter=d')])
  const lfsConfig = changed.includes(LFS_CONFIG) ? [LFS_CONFIG] : []
  const attributeFiles = changed.filter(isAttributeFile)
  const settings = await eolSettings(origin)
  const converting = (conversions: Map<string, string>) => [...conversions].filter(([, made]) => made !== '')
  const changedNow = await conversionsOf(workspace, originWorld(workspace, origin, tip), {paths: nulTerminated(written), settings})
  const converted = [...changedNow].filter(([, made]) => beyondLineEnds(made).length > 0).map(([path]) => path)
  // Attributes are the same where no attribute file changed: the user's own, for both.
  const applyTakes = async () => (await applyConversions(workspace, origin, {paths: written, now})).length === 0
  if (attributeFiles.length === 0) return {attributeFiles: lfsConfig, converted, applyTakes: lfsConfig.length === 0 || (await applyTakes())}
  const paths = (await git(['ls-tree', '-r', '-z', '--name-only', tip], onPrivate)).stdout
  const [before, after] = await Promise.all([
    conversionsOf(workspace, originWorld(workspace, origin, base), {paths, settings}),
    conversionsOf(workspace, originWorld(workspace, origin, tip), {paths, settings}),
  ])
  // A name that is not UTF-8 is asked of git as another (NOT_UTF8): what attributes make of it cannot be told
  // (attacker's review 26, F6).
  const changes = paths.includes(NOT_UTF8) || converting(after).some(([path, made]) => made !== before.get(path))
  const refused = [...(changes ? attributeFiles : []), ...lfsConfig].sort()
  return {attributeFiles: refused, converted, applyTakes: refused.length === 0 || (await applyTakes())}
}

const nulTerminated = (paths: string[]) => paths.map(path => `${path}\0`).join('')

/**
 * The paths among `paths` that hmm apply's git would write as other bytes
 * than their blobs, which hmm diff shows, sorted. That git runs on hmm's
 * private repository (no filter driver, no line-end setting of the user's)
 * with the origin as its work tree: its conversions come from the origin's
 * attribute files, and those the change itself writes, which are the
 * workspace's now (`now`): a working-tree-encoding, ident, or CRLF line
 * ends where the change's attributes ask for them and the origin's do not.
 */
export async function applyConversions(workspace: Workspace, origin: string, {paths, now}: {paths: string[]; now: string}): Promise<string[]> {
  const env = {...privateEnv(privateRepo(workspace.gitDir)), GIT_WORK_TREE: origin}
  const options = {paths: nulTerminated(paths), settings: NO_EOL_SETTINGS, filters: false}
  const [own, brought] = await Promise.all([
    conversionsOf(workspace, {cwd: origin, env}, options),
    conversionsOf(workspace, {cwd: origin, env, tree: now}, options),
  ])
  const crlf = (made: string | undefined) => (made ?? '').split(' ').includes(CRLF)
  return paths
    .filter(path => [own, brought].some(world => beyondLineEnds(world.get(path)).length > 0) || (crlf(brought.get(path)) && !crlf(own.get(path))))
    .sort()
}
