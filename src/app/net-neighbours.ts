// What a network limit does not promise (SPEC "Network", MANUAL): --net
// confines the command's own connections, not what it exchanges with a
// process of another workspace that runs with more network. Channels no
// sandbox of this kind closes lie between them (a lock Landlock does not
// mediate on a file both may read, timing, load), so hmm says when such a
// neighbour runs, once, as the command starts.
import {runsMoreNetwork} from '../native/helper.js'
import {networkOf, type Effective} from '../sandbox/config.js'
import {hostsMark} from '../sandbox/policy.js'
import {warn} from '../ui/errors.js'
import type {Context} from '../workspaces/context.js'
import {statuses} from '../workspaces/status.js'
import {Workspace} from '../workspaces/workspace.js'

export function warnNetworkNeighbours(context: Context, settings: Effective, self?: string): void {
  const network = networkOf(settings)
  if (network === undefined) return
  const mark = network.kind === 'proxy' ? hostsMark(network.hosts) : undefined
  const others = context.store
    .list()
    .filter(row => row.active && row.id !== self)
    .map(row => new Workspace(row, context.data))
  const states = statuses(others)
  const more = others.filter((workspace, index) => states[index] === 'running' && runsMoreNetwork(workspace.lock, mark))
  if (more.length === 0) return
  const asked = network.kind === 'proxy' ? network.hosts.join(', ') : 'none'
  const which = more.map(workspace => workspace.label).join(', ')
  warn(
    `${more.length === 1 ? 'workspace' : 'workspaces'} ${which} ${more.length === 1 ? 'runs' : 'run'} with more network than this command's (${asked}): --net keeps this command from connecting, not from passing data to them (MANUAL: Network)`,
  )
}
