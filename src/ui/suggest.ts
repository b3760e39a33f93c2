// The nearest of some words to a mistyped one, for "did you mean ...?".

/** Edits (insert, delete, substitute, swap two neighbours) from a to b. */
function distance(a: string, b: string): number {
  const rows = Array.from({length: a.length + 1}, (_, i) => Array.from({length: b.length + 1}, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}

/** The candidate closest to word, if close enough to be what was meant (at most a third of it mistyped, 1 edit at least). */
export function nearest(word: string, candidates: string[]): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3))
  let best: {candidate: string; edits: number} | undefined
  for (const candidate of candidates) {
    const edits = distance(word.toLowerCase(), candidate)
    if (edits <= limit && (!best || edits < best.edits)) best = {candidate, edits}
  }
  return best?.candidate
}

/** `unknown command lst; did you mean ls?` (or where to look when nothing is near). */
export function unknownCommand(word: string, commands: string[]): string {
  const near = nearest(word, commands)
  return near ? `unknown command ${word}; did you mean ${near}?` : `unknown command ${word} (hmm help lists the commands)`
}
