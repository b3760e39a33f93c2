// Conflict markers that name the workspace: git labels a side with the name
// it was given (`>>>>>>> refs/hmm/<id>` for merge, `theirs` for apply -3),
// and the user should read `>>>>>>> workspace <label>` instead.
//
// Security: only regular files of the origin's own index are rewritten,
// found without following a link (the path's parents included), and only
// the marker lines change.
import {closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, readFileSync, realpathSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {git} from './git.js'

/** The paths with unmerged entries in the index the options name (the origin's own, or GIT_INDEX_FILE's). */
export async function unmergedPaths(options: {cwd: string; env?: Record<string, string>}): Promise<string[]> {
  const listed = await git(['ls-files', '--unmerged', '-z'], {...options, okStatuses: [128]})
  // `<mode> <object> <stage>\t<path>\0`
  const paths = listed.stdout
    .split('\0')
    .filter(Boolean)
    .map(entry => entry.slice(entry.indexOf('\t') + 1))
  return [...new Set(paths)]
}

/** Rewrites the marker lines `<marker> <from>` of each file into `<marker> <to>`, for each marker given. */
export function relabelConflicts(workTree: string, paths: string[], labels: Array<{marker: string; from: string; to: string}>): void {
  const root = realpathSync(workTree)
  for (const path of paths) {
    const file = join(root, path)
    // A link on the way (or at the end) is not git's conflict file: left alone.
    if (realpathSync(dirname(file)) !== dirname(file) || !lstatSync(file, {throwIfNoEntry: false})?.isFile()) continue
    const fd = openSync(file, constants.O_RDWR | constants.O_NOFOLLOW)
    try {
      if (!fstatSync(fd).isFile()) continue
      let text = readFileSync(fd, 'latin1')
      let changed = false
      for (const {marker, from, to} of labels) {
        const pattern = new RegExp(`^${marker} ${escape(from)}(?=\\r?$)`, 'gm')
        const relabelled = text.replace(pattern, () => `${marker} ${to}`)
        changed ||= relabelled !== text
        text = relabelled
      }
      if (changed) {
        // Same file, same mode: written in place from the start, then cut to length.
        const bytes = Buffer.from(text, 'latin1')
        writeSync(fd, bytes, 0, bytes.length, 0)
        ftruncateSync(fd, bytes.length)
      }
    } finally {
      closeSync(fd)
    }
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
