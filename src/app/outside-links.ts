// A link at the top of the origin to a directory elsewhere (`build ->
// /mnt/cache/proj`, an ignored build or cache directory kept on another
// disk) is cloned as the link it is (SPEC run: links stay links). Outside,
// the user's build writes through it; in the workspace the command may
// not (it writes only the workspace and what -w grants), and its build
// fails with a bare "Permission denied" or "Read-only file system". hmm
// says so once, as the command starts, naming the grant that would let it.
import {accessSync, constants, readdirSync, readlinkSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {isAbsolute, join} from 'node:path'
import {canonical, isWithin} from '../sandbox/paths.js'
import {say} from '../ui/errors.js'

/** Whether the user may write the directory `path` (a link's target, followed). */
function writableDirectory(path: string): boolean {
  try {
    if (!statSync(path).isDirectory()) return false
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The links at the top of `tree` whose absolute target is a directory the
 * user can write, outside `writable` (what -w grants) and the temporary
 * directory (the command has its own), each as `name -> target`.
 */
export function linksOutOfReach(tree: string, writable: string[]): {name: string; target: string}[] {
  const granted = [...writable, tmpdir(), '/tmp'].map(canonical)
  return readdirSync(tree, {withFileTypes: true})
    .filter(entry => entry.isSymbolicLink())
    .flatMap(entry => {
      const target = readlinkSync(join(tree, entry.name))
      if (!isAbsolute(target) || !writableDirectory(target)) return []
      const real = canonical(target)
      return granted.some(place => isWithin(real, place)) ? [] : [{name: entry.name, target}]
    })
}

/** Says which links at the top of the tree lead to directories the command cannot write (linksOutOfReach). */
export function sayLinksOutOfReach(tree: string, writable: string[]): void {
  for (const {name, target} of linksOutOfReach(tree, writable)) {
    say(`${name} -> ${target} leads out of the workspace, where the command cannot write (hmm run -w ${target} lets it)`)
  }
}
