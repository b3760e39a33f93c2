// What a checkout of a workspace's commits would write into the origin's
// files, against what `hmm diff` shows (SPEC merge: "never bring in a change
// that hmm diff does not show").
//
// hmm diff and hmm log -p show the commits' blobs. A checkout writes a blob
// through the attributes that apply to its path: a filter's smudge (git-lfs
// fetching content from wherever .lfsconfig says, outside the sandbox), a
// working-tree-encoding, ident, or end-of-line conversion. So where the
// commits change what those attributes make of a path, into something
// other than the blob itself, the bytes merge writes are not the ones shown,
// and merge refuses; so it does when they change .lfsconfig, which tells
// git-lfs where to fetch from. Attributes that stop a conversion are taken:
// then the bytes written are the blob shown.
//
// The attributes are asked of git itself (macros such as `binary` and the
// user's own attribute files included), as the origin's repository sees them
// with the base's and the tip's trees as its index: nothing is checked out
// and no filter runs.
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {git, gitLine} from './git.js'
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

/** What a checkout makes of a path's blob, '' for nothing: the bytes written are the blob's. */
function conversion(states: Map<string, string>, settings: EolSettings): string {
  const filter = states.get('filter')
  const encoding = states.get('working-tree-encoding')
  return [
    // `filter` set or unset names no driver; any other value may name one the user configured.
    filter && !['set', 'unset', 'unspecified'].includes(filter) ? `filter=${filter}` : '',
    // Any encoding given (even set or unset, which make git stop) changes what checkout does.
    encoding && encoding !== 'unspecified' ? `working-tree-encoding=${encoding}` : '',
    states.get('ident') === 'set' ? 'ident' : '',
    writesCrlf(states, settings) ? 'crlf' : '',
  ]
    .filter(Boolean)
    .join(' ')
}

/** Each path's conversion on checkout with `tree` as the index (the origin's repository, config and attribute files). */
async function conversionsOf(
  workspace: Workspace,
  origin: string,
  {tree, paths, settings}: {tree: string; paths: string; settings: EolSettings},
): Promise<Map<string, string>> {
  const index = join(workspace.gitDir, `index.attributes-${tree}`)
  rmSync(index, {force: true})
  try {
    const env = privateEnv(privateRepo(workspace.gitDir))
    await git(['read-tree', tree], {cwd: workspace.gitDir, env: {...env, GIT_INDEX_FILE: index}})
    // --cached: the attribute files of the index (the tree), not the origin's working files.
    const checked = await git(['check-attr', '--cached', '--stdin', '-z', ...ATTRIBUTES], {
      cwd: origin,
      env: {GIT_INDEX_FILE: index, GIT_OBJECT_DIRECTORY: join(workspace.gitDir, 'objects')},
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
    return new Map([...states].map(([path, pathStates]) => [path, conversion(pathStates, settings)]))
  } finally {
    rmSync(index, {force: true})
  }
}

const isAttributeFile = (path: string) => path === '.gitattributes' || path.endsWith('/.gitattributes')

/**
 * The files among the commits' changes up to `tip` that make a checkout of
 * them write what hmm diff does not show, sorted: the .gitattributes files
 * changed, when any path of the tip is written otherwise than before and
 * otherwise than its blob; .lfsconfig when changed. Empty when none.
 */
export async function checkoutConversions(workspace: Workspace, origin: string, tip: string): Promise<string[]> {
  const onPrivate = {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
  const base = workspace.row.headCommit ?? (await gitLine(['mktree'], {...onPrivate, input: ''}))
  const changed = (await git(['diff-tree', '-r', '-z', '--no-renames', '--name-only', base, tip], onPrivate)).stdout.split('\0').filter(Boolean)
  const lfsConfig = changed.includes(LFS_CONFIG) ? [LFS_CONFIG] : []
  const attributeFiles = changed.filter(isAttributeFile)
  // Attributes are the same where no attribute file changed: the user's own, for both.
  if (attributeFiles.length === 0) return lfsConfig
  const paths = (await git(['ls-tree', '-r', '-z', '--name-only', tip], onPrivate)).stdout
  const settings = await eolSettings(origin)
  const [before, after] = await Promise.all([
    conversionsOf(workspace, origin, {tree: base, paths, settings}),
    conversionsOf(workspace, origin, {tree: tip, paths, settings}),
  ])
  const converted = [...after].some(([path, made]) => made !== '' && made !== before.get(path))
  return [...(converted ? attributeFiles : []), ...lfsConfig].sort()
}
