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

/**
 * A workspace's paths are worked out when asked: listing makes one
 * Workspace per row and needs only the tree, and path.join is dear while
 * Node starts (tens of microseconds a call, not yet compiled).
 */
export class Workspace {
  constructor(
    readonly row: WorkspaceRow,
    /** hmm's data directory, which holds it. */
    readonly data: string,
  ) {}

  get root(): string {
    return join(this.data, this.row.id)
  }

  get tree(): string {
    return treePath(this.data, this.row.id, this.row.origin)
  }

  get lock(): string {
    return join(this.root, 'lock')
  }

  /** A background run's pty: its scrollback, key and socket (native-helpers/background.c). */
  get background(): string {
    return join(this.root, 'bg')
  }

  get gitDir(): string {
    return join(this.root, 'git')
  }

  /** The config file's `exclude` as it was when the workspace was made: what diff, apply and merge leave out. */
  get excludeFile(): string {
    return join(this.root, 'exclude')
  }

  get base(): string {
    return join(this.root, 'base', basename(this.row.origin) || 'root')
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
