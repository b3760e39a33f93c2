// Symbolic links that lead out of the tree (SPEC "hmm apply" › Paths): a
// link the command made to `~/.ssh/id_ed25519`, or to `../../x` from where
// it sits, written into the origin, is followed there by the user's own
// tools. hmm diff marks them, apply and merge refuse them unless --force.
//
// A link leads out when its target is absolute or, resolved as the kernel
// would from the link's directory, climbs above the tree's top: `..` after
// a link counts from where that link leads, not from its name, so
// `c -> e/up/../secret` with `e/up -> ..` leads out though its text does
// not. A repository's `.git` (as git or the file system names it:
// refused-paths.ts) is not of the tree either: a tool writing through
// `dist/app.conf -> ../.git/config` rewrites the origin's config, which git
// runs. The links followed are those of the same tree; a directory the tree
// does not hold is taken as a plain one, unless the origin has a link there
// (which no tree holds: an ignored `bazel-out`). A link the tree had before
// is looked at again when a link on its way is new: `d/sub` made a link
// turns `d/a -> sub/../../x` out. Everything here reads hmm's private
// repository, and the origin's files' types.
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {git, gitBytes, NOT_UTF8} from './git.js'
import {rawChangesBetween} from './raw-changes.js'
import {privateEnv, privateRepo} from './private-repo.js'
import {originEntry} from './origin-entry.js'
import {folded, refusedName} from './refused-paths.js'

export interface LinkOut {
  path: string
  target: string
}

/** The kernel's bound on links followed in one lookup (ELOOP past it): a loop is taken as leading out. */
const MAX_LINKS = 40

const LINK_MODE = '120000'

function onPrivate(workspace: Workspace) {
  return {cwd: workspace.gitDir, env: privateEnv(privateRepo(workspace.gitDir))}
}

/** The paths whose entry in `to` is a link that is new or changed since `from`. */
async function changedLinks(workspace: Workspace, from: string, to: string): Promise<string[]> {
  return (await rawChangesBetween(workspace, from, to)).filter(([record]) => record.split(' ')[1] === LINK_MODE).map(([, path]) => path)
}

/** Every link of `tree`, path to target. */
async function linksOf(workspace: Workspace, tree: string): Promise<Map<string, string>> {
  const listed = await git(['ls-tree', '-r', '-z', tree], onPrivate(workspace))
  // `<mode> <type> <object>\t<path>` each.
  const links = listed.stdout
    .split('\0')
    .filter(entry => entry.startsWith(`${LINK_MODE} `))
    .map(entry => ({object: entry.slice(0, entry.indexOf('\t')).split(' ')[2], path: entry.slice(entry.indexOf('\t') + 1)}))
  const targets = new Map<string, string>()
  if (links.length === 0) return targets
  // `<object> blob <size>\n<content>\n` each.
  const objects = (await gitBytes(['cat-file', '--batch'], {...onPrivate(workspace), input: links.map(link => `${link.object}\n`).join('')})).stdout
  let offset = 0
  for (const link of links) {
    const newline = objects.indexOf(10, offset)
    const size = Number(objects.subarray(offset, newline).toString('latin1').split(' ')[2])
    targets.set(link.path, objects.subarray(newline + 1, newline + 1 + size).toString('utf8'))
    offset = newline + 1 + size + 1
  }
  return targets
}

/** The links of one tree, path to target, and whether a path the tree holds no link at is one in the origin. */
interface Links {
  of: Map<string, string>
  inOrigin: (path: string) => boolean
}

/** Where `target`, read from the directory `dir` (its names from the top), leads: its names, or undefined when out of the tree. */
function resolved(dir: string[], target: string, links: Links, budget: {left: number}): string[] | undefined {
  if (target.startsWith('/')) return undefined
  const at = [...dir]
  for (const name of target.split('/')) {
    if (name === '' || name === '.') continue
    if (name === '..') {
      if (at.length === 0) return undefined
      at.pop()
      continue
    }
    if (refusedName(name) || folded(name) === '.git') return undefined
    const path = [...at, name].join('/')
    const link = links.of.get(path)
    if (link === undefined) {
      if (links.inOrigin(path)) return undefined
      at.push(name)
      continue
    }
    if (--budget.left < 0) return undefined
    const to = resolved(at, link, links, budget)
    if (to === undefined) return undefined
    at.splice(0, at.length, ...to)
  }
  return at
}

/**
 * Whether the link at `path` among `links` (of one tree) leads to a place
 * in that tree. A link whose name or target holds a name that is not UTF-8
 * (git's bytes read as U+FFFD) does not: two such names read alike, so the
 * link judged could be another than the one written (attacker's review 25).
 */
function leadsIn(path: string, links: Links): boolean {
  const target = links.of.get(path)!
  if (path.includes(NOT_UTF8) || target.includes(NOT_UTF8)) return false
  return resolved(path.split('/').slice(0, -1), target, links, {left: MAX_LINKS}) !== undefined
}

/**
 * Whether the origin has a link at `path` (from its top): one no tree
 * holds (ignored, as Bazel's `bazel-out` or a `.venv` made a link often
 * is) leads where the tree cannot say; a link through it, or through what
 * cannot be looked at, is taken as leading out.
 */
function originLink(origin: string): (path: string) => boolean {
  return path => {
    const entry = originEntry(join(origin, path))
    return entry === 'unknown' || entry?.isSymbolicLink() === true
  }
}

/**
 * The links that lead out of the tree `to`: those new or changed since any
 * of `from` (trees or commits), and those unchanged that led in there,
 * which a new link on their way turns out. Sorted by path.
 */
export async function linksLeaving(workspace: Workspace, from: string[], to: string): Promise<LinkOut[]> {
  const changed = new Set((await Promise.all(from.map(tree => changedLinks(workspace, tree, to)))).flat())
  if (changed.size === 0) return []
  const inOrigin = originLink(workspace.row.origin)
  const [links, ...before] = (await Promise.all([to, ...from].map(tree => linksOf(workspace, tree)))).map(of => ({of, inOrigin}))
  const turnedOut = (path: string) => before.some(had => had.of.get(path) === links.of.get(path) && leadsIn(path, had))
  return [...links.of.keys()]
    .sort()
    .filter(path => !leadsIn(path, links) && (changed.has(path) || turnedOut(path)))
    .map(path => ({path, target: links.of.get(path)!}))
}
