// `hmm ls`: the workspaces of the working directory (or all), as a table or JSON.
// Kept free of oclif so bare `hmm` can list without loading the CLI framework.
import {formatAge, formatTable, tildify} from '../ui/format.js'
import {dataDir} from '../platform/index.js'
import {workingOrigin} from '../workspaces/context.js'
import {statuses} from '../workspaces/status.js'
import {Store} from '../workspaces/store.js'
import {Workspace} from '../workspaces/workspace.js'

export interface ListOptions {
  all: boolean
  json: boolean
}

export function listing(options: ListOptions): string {
  const data = dataDir()
  const store = Store.openExisting(data)
  const rows = store ? store.list(options.all ? undefined : workingOrigin()) : []
  store?.close()
  const workspaces = rows.map(row => new Workspace(row, data))
  const states = statuses(workspaces)
  if (options.json) {
    const objects = workspaces.map((ws, index) => ({
      id: ws.id,
      name: ws.row.name,
      state: states[index],
      createdAt: new Date(ws.row.createdAt).toISOString(),
      origin: ws.row.origin,
      tree: ws.tree,
    }))
    return JSON.stringify(objects, null, 2) + '\n'
  }
  if (workspaces.length === 0) return ''
  const now = Date.now()
  return formatTable(
    ['ID', 'NAME', 'STATE', 'AGE', 'ORIGIN'],
    workspaces.map((ws, index) => [ws.id, ws.row.name ?? '-', states[index], formatAge(now - ws.row.createdAt), tildify(ws.row.origin)]),
    ['left', 'left', 'left', 'right', 'left'],
  )
}
