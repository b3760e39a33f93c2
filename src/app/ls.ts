// `hmm ls`: the workspaces of the working directory (or all), as a table or JSON.
// Kept free of oclif so bare `hmm` can list without loading the CLI framework.
import {lstatSync} from 'node:fs'
import {formatAge, formatSize, formatTable, formatWork, printable, printableJson, tildify, type Align} from '../ui/format.js'
import {colours} from '../ui/colour.js'
import {dataDir} from '../platform/index.js'
import {workingDirectory, workingOrigin} from '../workspaces/context.js'
import {statuses, waitsForInput} from '../workspaces/status.js'
import {settleMerge} from '../workspaces/merging.js'
import {hiddenRegistry, registryPath, Store} from '../workspaces/store.js'
import {canonical, isWithin} from '../sandbox/paths.js'
import {Workspace} from '../workspaces/workspace.js'
import {diskSpace} from '../workspaces/disk.js'

export interface ListOptions {
  all: boolean
  json: boolean
  /** SIZE too. */
  long?: boolean
}

export function listing(options: ListOptions): string {
  const data = dataDir()
  const store = Store.openExisting(data)
  // Inside a workspace the sandbox covers the data directory: no registry there is not "no workspaces".
  if (!store && isWithin(workingDirectory(), canonical(data))) throw hiddenRegistry(registryPath(data))
  // A merge left at conflicts that the user has since committed counts as merged (workspaces/merging.ts).
  const rows = store ? store.list(options.all ? undefined : workingOrigin()).map(row => settleMerge(store, row)) : []
  store?.close()
  const workspaces = rows.map(row => new Workspace(row, data))
  const now = Date.now()
  const found = statuses(workspaces)
  const running = found.map(state => state === 'running')
  // `waiting`: a running background run silent for a minute (one stat per running workspace) that reads its terminal.
  const states = found.map((state, index) => (running[index] && waitsForInput(workspaces[index], now) ? 'waiting' : state))
  // As recorded when a command last exited (workspaces/work.ts): listing never reads a tree. Not known while running.
  const works = workspaces.map(({row}, index) =>
    running[index] ? {commits: null, files: null, taken: null} : {commits: row.workCommits, files: row.workFiles, taken: row.workTaken},
  )
  // How the command that ended last ended: not while one runs.
  const ends = workspaces.map(({row}, index) => (running[index] ? {exit: null, signal: null} : {exit: row.exitCode, signal: row.exitSignal}))
  if (options.json) {
    const objects = workspaces.map((ws, index) => ({
      id: ws.id,
      name: ws.row.name,
      state: states[index],
      createdAt: new Date(ws.row.createdAt).toISOString(),
      origin: ws.row.origin,
      tree: ws.tree,
      ...works[index],
      ...ends[index],
    }))
    return printableJson(objects, 2) + '\n'
  }
  if (workspaces.length === 0) return ''
  // Measured, so only when asked for: what the commands wrote to their /tmp and caches counts.
  const sizes = options.long ? diskSpace(workspaces) : []
  // One look per origin (not per workspace): a tree is never read.
  const origins = new Map<string, boolean>()
  const gone = (origin: string) => {
    if (!origins.has(origin)) origins.set(origin, !lstatSync(origin, {throwIfNoEntry: false})?.isDirectory())
    return origins.get(origin)!
  }
  const chalk = colours(1)
  // running green, broken red; work taken back dim.
  const painted = new Map<string, (cell: string) => string>([
    ['running', chalk.green],
    ['waiting', chalk.yellow],
    ['broken', chalk.red],
    ['merged', chalk.dim],
    ['applied', chalk.dim],
    ['pushed', chalk.dim],
  ])
  const columns: Array<[string, Align, (ws: Workspace, index: number) => string]> = [
    ['ID', 'left', ws => ws.id],
    ['NAME', 'left', ws => ws.row.name ?? '-'],
    ['STATE', 'left', (_, index) => states[index]],
    ['AGE', 'right', ws => formatAge(now - ws.row.createdAt)],
    ['WORK', 'left', (_, index) => formatWork(works[index])],
    ...(options.long
      ? [
          ['SIZE', 'right', (_: Workspace, index: number) => (sizes[index] === null ? '?' : formatSize(sizes[index]))] as [
            string,
            Align,
            (ws: Workspace, index: number) => string,
          ],
        ]
      : []),
    ...(options.long
      ? [['EXIT', 'right', (_: Workspace, index: number) => formatEnd(ends[index])] as [string, Align, (ws: Workspace, index: number) => string]]
      : []),
    // A directory's name may hold anything, a bidirectional override too: shown, not acted on.
    ['ORIGIN', 'left', ws => printable(tildify(ws.row.origin)) + (gone(ws.row.origin) ? ' (gone)' : '')],
  ]
  return formatTable(
    columns.map(([header]) => header),
    workspaces.map((ws, index) => columns.map(([, , cell]) => cell(ws, index))),
    columns.map(([, align]) => align),
    (cell, _, column) => (['STATE', 'WORK'].includes(columns[column][0]) ? (painted.get(cell)?.(cell) ?? cell) : cell),
  )
}

/** EXIT in `hmm ls -l`: the exit status, `signal N`, or `-` (running, or not known). */
function formatEnd(end: {exit: number | null; signal: number | null}): string {
  if (end.signal !== null) return `signal ${end.signal}`
  return end.exit === null ? '-' : String(end.exit)
}

/**
 * Bare `hmm`'s hint on a terminal when the working directory has no
 * workspaces: where others are, if there are, or where to start.
 */
export function noWorkspacesHint(): string {
  const store = Store.openExisting(dataDir())
  const elsewhere = store?.list(undefined).length ?? 0
  store?.close()
  if (elsewhere === 0) return 'no workspaces here yet: hmm run makes one (hmm help lists the commands)'
  return `no workspaces in ${printable(tildify(workingOrigin()))} (${elsewhere} elsewhere: hmm ls -a)`
}
