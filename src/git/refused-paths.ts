// Paths git refuses in a tree or an index: a `.git` (a repository's own
// files), `.` or `..` among their names. The origin's fetch refuses objects
// holding them (fsck) and git add and checkout refuse the paths, whatever
// hmm's own checks say, so hmm names them itself: a command that committed
// or wrote `.git/hooks/post-merge` is told apart from git's raw failure.

/** Code points HFS+ ignores in names, so `.g\u200cit` is `.git` there (git's is_hfs_dotgit). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g

/**
 * A name git's object check refuses in a tree (fsck's hasDot, hasDotdot,
 * hasDotgit): `.` and `..`, and `.git` in any case, also as HFS+ (ignored
 * code points) or NTFS (`git~1`, trailing dots and spaces, then the end,
 * a backslash or a colon) would read it.
 */
export function refusedName(name: string): boolean {
  return name === '.' || name === '..' || name.replace(HFS_IGNORED, '').toLowerCase() === '.git' || /^(\.git|git~1)[. ]*([\\:]|$)/i.test(name)
}

/**
 * A name as a file system may read it that folds case and ignores what
 * Unicode marks as ignorable (macOS's, FAT's and NTFS's, Linux's casefold
 * directories: `Objects` is `objects` there, `.G\u200bit` may be `.git`):
 * for names hmm looks for, not for what git refuses.
 */
export const folded = (name: string): string =>
  name
    .normalize('NFC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .toLowerCase()

/** The paths among `paths` ('/'-separated) with a refused name, sorted: the files (or empty directories), not each directory above them. */
export function refusedAmong(paths: Iterable<string>): string[] {
  const refused = [...paths].filter(path => path.split('/').some(refusedName))
  return refused.filter(path => !refused.some(other => other.startsWith(`${path}/`))).sort()
}

/** What the messages say of them. */
export const REFUSED = 'paths git refuses (.git, . or .. in them)'
