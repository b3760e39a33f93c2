// A strict reader for the SBPL the Seatbelt profile is written in, to check
// its shape without a Mac: balanced lists, `;` comments to the end of the
// line, symbols, and strings in double quotes whose only escapes are `\\`
// and `\"` (a raw newline in a string is an error). Anything else — a `#"`
// regex, a stray quote, an unknown escape — is an error, so a path pasted
// into the text would not slip through as something the reader half-knows.

export type Sexpr = {kind: 'symbol'; name: string} | {kind: 'string'; value: string} | {kind: 'list'; items: Sexpr[]}

type Token = {kind: 'open' | 'close'} | {kind: 'symbol'; name: string} | {kind: 'string'; value: string}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let at = 0
  while (at < text.length) {
    const char = text[at]!
    if (/\s/.test(char)) {
      at++
    } else if (char === ';') {
      const end = text.indexOf('\n', at)
      at = end === -1 ? text.length : end + 1
    } else if (char === '(' || char === ')') {
      tokens.push({kind: char === '(' ? 'open' : 'close'})
      at++
    } else if (char === '"') {
      let value = ''
      at++
      for (;;) {
        if (at >= text.length) throw new Error('unterminated string')
        const inner = text[at]!
        if (inner === '"') break
        if (inner === '\n') throw new Error(`newline inside a string at ${at}`)
        if (inner === '\\') {
          const escaped = text[at + 1]
          if (escaped !== '\\' && escaped !== '"') throw new Error(`unknown escape \\${escaped} at ${at}`)
          value += escaped
          at += 2
        } else {
          value += inner
          at++
        }
      }
      at++
      tokens.push({kind: 'string', value})
    } else {
      const match = /^[A-Za-z0-9*_-]+/.exec(text.slice(at))
      if (!match) throw new Error(`unexpected ${JSON.stringify(char)} at ${at}`)
      const name = match[0]
      at += name.length
      const next = text[at]
      if (next !== undefined && !/[\s()]/.test(next)) throw new Error(`symbol ${name} runs into ${JSON.stringify(next)} at ${at}`)
      tokens.push({kind: 'symbol', name})
    }
  }
  return tokens
}

/** The top-level forms of a text; throws unless every list is closed and every close opened. */
export function parse(text: string): Sexpr[] {
  const stack: Sexpr[][] = [[]]
  for (const token of tokenize(text)) {
    if (token.kind === 'symbol' || token.kind === 'string') {
      stack.at(-1)!.push(token)
    } else if (token.kind === 'open') {
      stack.push([])
    } else {
      const items = stack.pop()
      if (!items || stack.length === 0) throw new Error('a ) closes nothing')
      stack.at(-1)!.push({kind: 'list', items})
    }
  }
  if (stack.length !== 1) throw new Error(`${stack.length - 1} list(s) left open`)
  return stack[0]!
}

/** Every list in the forms, depth first, each with its parent list (undefined at the top). */
export function* lists(forms: Sexpr[], parent?: Sexpr & {kind: 'list'}): Generator<{list: Sexpr & {kind: 'list'}; parent?: Sexpr & {kind: 'list'}}> {
  for (const form of forms) {
    if (form.kind !== 'list') continue
    yield {list: form, parent}
    yield* lists(form.items, form)
  }
}

export function head(list: Sexpr & {kind: 'list'}): string | undefined {
  const first = list.items[0]
  return first?.kind === 'symbol' ? first.name : undefined
}
