// Where a workspace's pieces live on disk (SPEC "Files"):
//   <data>/<id>/tree/<basename of origin>   the clone the command runs in
//   <data>/<id>/lock                        flock held while the command runs
//   <data>/<id>/git/                        hmm's private git directory: the
//                                           recorded trees, indexes, objects
//   <data>/<id>/base/<basename of origin>   origins that are not git repositories:
//                                           the origin as it was (copy-on-write)
import {existsSync} from 'node:fs'
import {basename, isAbsolute, join, relative} from 'node:path'
import {label} from './names.js'
import type {WorkspaceRow} from './store.js'

/** Where the tree of the workspace `id` lies (under the origin's name). */
export function treePath(data: string, id: string, origin: string): string {
  return join(data, id, 'tree', basename(origin) || 'root')
}

export class Workspace {
  readonly root: string
  readonly tree: string
  readonly lock: string
  readonly gitDir: string
  readonly base: string

  constructor(
    readonly row: WorkspaceRow,
    /** hmm's data directory, which holds it. */
    readonly data: string,
  ) {
    this.root = join(data, row.id)
    this.tree = treePath(data, row.id, row.origin)
    this.lock = join(this.root, 'lock')
    this.gitDir = join(this.root, 'git')
    this.base = join(this.root, 'base', basename(row.origin) || 'root')
  }

  get id(): string {
    return this.row.id
  }

  get label(): string {
    return label(this.row)
  }

  /** The directory of the tree at the place dir (canonical) has in the origin; the tree's top for a dir outside the origin. */
  treeDirFor(dir: string): string {
    const place = relative(this.row.origin, dir)
    return /^\.\.(\/|$)/.test(place) || isAbsolute(place) ? this.tree : join(this.tree, place)
  }

  treeExists(): boolean {
    return existsSync(this.tree)
  }
}
