// What a hmm command works out about a workspace once: its files are read
// once per command (diff, then recording its WORK; apply's tree, then its
// WORK), each read costing a confined git or two.

/**
 * `compute`, once per workspace for as long as this process (one hmm
 * command) lives; a promise that failed is forgotten, so the next call asks again.
 */
export function oncePerWorkspace<W extends {root: string}, T>(compute: (workspace: W) => Promise<T>): (workspace: W) => Promise<T> {
  const computed = new Map<string, Promise<T>>()
  return workspace => {
    let result = computed.get(workspace.root)
    if (!result) {
      result = compute(workspace)
      computed.set(workspace.root, result)
      result.catch(() => computed.delete(workspace.root))
    }
    return result
  }
}
