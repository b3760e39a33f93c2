// `hmm attach WS`: the user's terminal joins a background run's (SPEC
// "Background runs"). The helper relays (native-helpers/background.c: the
// same relay and terminal filter as a foreground run); hmm says what came
// of it. One attach at a time: another is refused.
import {existsSync} from 'node:fs'
import type {Readable} from 'node:stream'
import {childProcess, helperPath} from '../native/helper.js'
import {HmmError, say} from '../ui/errors.js'
import {isTerminal} from '../ui/terminal.js'
import {Context} from '../workspaces/context.js'
import {status} from '../workspaces/status.js'
import type {Workspace} from '../workspaces/workspace.js'

/** Shown when attaching and in MANUAL: the byte that detaches (background.c DETACH_KEY). */
export const DETACH_KEY = 'Ctrl-]'

/** How a wait status (background.c's "ended N") reads. */
function endedAs(waitStatus: number): string {
  const signal = waitStatus & 0x7f
  return signal === 0 ? `exit status ${(waitStatus >> 8) & 0xff}` : `signal ${signal}`
}

/** The background run of a workspace, which must be running one. */
function backgroundOf(context: Context, key: string | undefined): Workspace {
  const workspace = context.workspace(key)
  if (!existsSync(workspace.background)) throw new HmmError(`workspace ${workspace.label} was not run in the background (hmm run -d)`)
  if (status(workspace) !== 'running') throw new HmmError(`workspace ${workspace.label} is not running`)
  return workspace
}

export async function attachWorkspace(key: string | undefined): Promise<number> {
  const context = new Context()
  let workspace: Workspace
  try {
    workspace = backgroundOf(context, key)
  } finally {
    context.close()
  }
  if (!isTerminal(0) || !isTerminal(1)) throw new HmmError('hmm attach needs a terminal')
  say(`attached to workspace ${workspace.label} (${DETACH_KEY} detaches)`)
  const child = childProcess().spawn(helperPath(), ['attach', workspace.background], {stdio: ['inherit', 'inherit', 'inherit', 'pipe']})
  let report = ''
  ;(child.stdio[3] as Readable).on('data', (chunk: Buffer) => (report += chunk.toString()))
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', error => reject(new HmmError(`could not start the sandbox helper: ${error.message}`)))
    child.on('close', resolve)
  })
  const [what, detail] = report.trim().split(' ')
  if (what === 'detached') say(`detached from workspace ${workspace.label}: it runs on (hmm attach, hmm peek)`)
  else if (what === 'ended') say(`workspace ${workspace.label}: the command ended (${endedAs(Number(detail))})`)
  else if (what === 'busy') throw new HmmError(`workspace ${workspace.label} is attached elsewhere (one terminal at a time)`)
  else if (what === 'not-running' || what === 'gone') say(`workspace ${workspace.label}: the command ended`)
  else throw new HmmError(`hmm attach failed (helper exit ${code})`)
  return 0
}
