// Whether the config file's `exclude` patterns could name any of a list of
// paths, asked in Node before the helper is (native-helpers/exclude.c
// decides): most lists hold no name the patterns could match (no `.env`),
// and a process less is 2 to 4 ms less on the way to the command.
//
// Never "no" where exclude.c would exclude a path: a path is excluded by a
// pattern that is not negated matching it or a directory above it, whose
// last part (after its last `/`) then matches one of the path's names as a
// whole. So each such last part is matched against every name, `*` and `?`
// as exclude.c reads them; negations are left out (they only bring paths
// back), and a pattern with a bracket expression leaves it to the helper.
// The patterns are read as exclude.c reads them: a line ends at a NUL.

/** One line of the patterns file as exclude.c's parse_line reads it: the pattern's body, or undefined (nothing, or a negation). */
function positiveBody(line: string): string | undefined {
  // A C string: the line ends at a NUL.
  const read = line.split('\0')[0]
  let text = read.endsWith('\r') ? read.slice(0, -1) : read
  while (text.endsWith(' ') && !text.endsWith('\\ ')) text = text.slice(0, -1)
  if (text === '' || text.startsWith('#') || text.startsWith('!')) return undefined
  return text.endsWith('/') ? text.slice(0, -1) : text
}

/** A regular expression source matching, as a whole name, what the glob `part` (no bracket expression) matches. */
function nameSource(part: string): string {
  let source = ''
  for (let at = 0; at < part.length; at++) {
    const c = part[at]
    if (c === '*') source += '[^/]*'
    // One byte in exclude.c, of a name's UTF-8: part of a character, or one.
    else if (c === '?') source += '[^/]?'
    else if (c === '\\' && at + 1 < part.length) source += escape(part[++at])
    else source += escape(c)
  }
  return source
}

const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** Whether any of the paths could be excluded by the patterns (the patterns file's text). */
export function mayExclude(patterns: string, paths: string[]): boolean {
  const sources: string[] = []
  for (const line of patterns.split('\n')) {
    const body = positiveBody(line)
    if (body === undefined) continue
    // A bracket expression anywhere may hold the `/` taken for the last one.
    if (body.includes('[')) return true
    const part = body.slice(body.lastIndexOf('/') + 1)
    if (part === '') return true
    sources.push(nameSource(part))
  }
  if (sources.length === 0) return false
  const name = new RegExp(`(?:^|/)(?:${sources.join('|')})(?:/|$)`)
  return paths.some(path => name.test(path))
}
