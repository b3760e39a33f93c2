// What the origin holds at a path the trees do not say (an ignored link, a
// HEAD hmm never recorded), looked at without following a link.
import {lstatSync, type Stats} from 'node:fs'

/** Its lstat; undefined where nothing is (or a file is on the way); 'unknown' where it cannot be looked at (no right to). */
export function originEntry(path: string): Stats | undefined | 'unknown' {
  try {
    return lstatSync(path, {throwIfNoEntry: false})
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? undefined : 'unknown'
  }
}
