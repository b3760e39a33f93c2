// Every command, for oclif's "explicit" command discovery: the commands live
// in the same bundled file as oclif itself (dist/main.bundle.cjs, see
// scripts/bundle.js), so running one loads a single file.
import Apply from './apply.js'
import Diff from './diff.js'
import Exec from './exec.js'
import Log from './log.js'
import Ls from './ls.js'
import Merge from './merge.js'
import Pr from './pr.js'
import Rm from './rm.js'
import Run from './run.js'
import Sandbox from './sandbox.js'
import Stop from './stop.js'

export const COMMANDS = {apply: Apply, diff: Diff, exec: Exec, log: Log, ls: Ls, merge: Merge, pr: Pr, rm: Rm, run: Run, sandbox: Sandbox, stop: Stop}
