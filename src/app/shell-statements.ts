// A shell file's statements as line ranges, for start-up-files.ts: one
// statement may span lines (a quoted value over several lines, a `\`
// continuation, a heredoc's body), and whatever sets a credential there
// must go whole. A small lexer, not a parser: it tracks quotes (single,
// double, bash's $'...'), command substitutions, comments, continuations and
// heredocs, which is all it takes to know where a line's statement ends.

/** Lines `first` to `last` (0-based, inclusive); `complete` is false where the file ended inside the statement. */
export interface Statement {
  first: number
  last: number
  complete: boolean
}

export type Dialect = 'sh' | 'fish'

/** What the lexer is inside of: quotes, `$(...)`, `$((...))`, `${...}`, backticks. */
type Context = 'single' | 'double' | 'ansi' | 'command' | 'arithmetic' | 'brace' | 'backtick'

/** `<<` (or `<<-`) and its delimiter word, quoted or not; not bash's `<<<`. */
const HEREDOC = /^<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|\\?([A-Za-z_][\w.-]*))/

/** The substitution `$((`, `$(` or `${` that opens at `at`, with its length. */
function opening(line: string, at: number): {context: Context; length: number} | undefined {
  if (line[at] !== '$') return undefined
  if (line.startsWith('$((', at)) return {context: 'arithmetic', length: 3}
  if (line[at + 1] === '(') return {context: 'command', length: 2}
  if (line[at + 1] === '{') return {context: 'brace', length: 2}
  return undefined
}

/** A word starts here: `#` begins a comment only there. */
const wordStart = (text: string, at: number) => at === 0 || /[\s;|&()]/.test(text[at - 1])

/** The file's statements, in order, covering every line. */
export function statements(text: string, dialect: Dialect): Statement[] {
  const lines = text.split('\n')
  const result: Statement[] = []
  let first = 0
  const stack: Context[] = []
  const top = () => stack.at(-1)
  const heredocs: {word: string; strip: boolean}[] = []
  let continued = false
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]
    continued = false
    for (let at = 0; at < line.length; at++) {
      const c = line[at]
      const context = top()
      if (context === 'single') {
        if (dialect === 'fish' && c === '\\' && (line[at + 1] === "'" || line[at + 1] === '\\')) at++
        else if (c === "'") stack.pop()
        continue
      }
      if (context === 'ansi') {
        if (c === '\\') at++
        else if (c === "'") stack.pop()
        continue
      }
      if (c === '\\') {
        if (at === line.length - 1) continued = true
        at++
        continue
      }
      if (context === 'double') {
        const opened = opening(line, at)
        if (c === '"') stack.pop()
        else if (opened !== undefined) {
          stack.push(opened.context)
          at += opened.length - 1
        } else if (c === '`') stack.push('backtick')
        continue
      }
      // Outside quotes: the top level, a substitution's command, a parameter's braces, arithmetic.
      if (c === '#' && context !== 'brace' && context !== 'arithmetic' && wordStart(line, at)) break
      const opened = opening(line, at)
      if (opened !== undefined) {
        stack.push(opened.context)
        at += opened.length - 1
      } else if (c === "'") stack.push(dialect === 'sh' && line[at - 1] === '$' ? 'ansi' : 'single')
      else if (c === '"') stack.push('double')
      else if (c === '`' && context === 'backtick') stack.pop()
      else if (c === '`') stack.push('backtick')
      else if (c === '(' && (context === 'command' || context === 'arithmetic')) stack.push(context)
      else if (c === ')' && (context === 'command' || context === 'arithmetic')) {
        stack.pop()
        // Arithmetic's `$((` closes with `))`.
        if (context === 'arithmetic' && stack.at(-1) !== 'arithmetic' && line[at + 1] === ')') at++
      } else if (c === '}' && context === 'brace') stack.pop()
      else if (
        c === '<' &&
        dialect === 'sh' &&
        context !== 'arithmetic' &&
        context !== 'brace' &&
        line[at + 1] === '<' &&
        line[at + 2] !== '<' &&
        line[at - 1] !== '<'
      ) {
        const [whole, dash, single, double, bare] = HEREDOC.exec(line.slice(at)) ?? []
        if (whole !== undefined) {
          heredocs.push({word: single ?? double ?? bare, strip: dash === '-'})
          at += whole.length - 1
        }
      }
    }
    // The heredocs' bodies follow the line that opened them (in a substitution's too), each up to its delimiter's own line.
    const quoted = ['single', 'double', 'ansi'].includes(top() ?? '')
    for (const {word, strip} of continued || quoted ? [] : heredocs.splice(0)) {
      for (;;) {
        index++
        if (index >= lines.length) return [...result, {first, last: lines.length - 1, complete: false}]
        if ((strip ? lines[index].replace(/^\t+/, '') : lines[index]) === word) break
      }
    }
    if (stack.length > 0 || continued) continue
    result.push({first, last: index, complete: true})
    first = index + 1
  }
  if (first < lines.length) result.push({first, last: lines.length - 1, complete: false})
  return result
}
