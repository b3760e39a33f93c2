// Every command, for oclif's "explicit" command discovery: the commands live
// in the same bundled file as oclif itself (dist/main.bundle.cjs, see
// scripts/bundle.js), so running one loads a single file.
import Apply from './apply.js'
import Attach from './attach.js'
import Completion from './completion.js'
import Diff from './diff.js'
import Exec from './exec.js'
import Help from './help.js'
import Log from './log.js'
import Ls from './ls.js'
import Merge from './merge.js'
import Path from './path.js'
import Peek from './peek.js'
import Pr from './pr.js'
import Prune from './prune.js'
import Rm from './rm.js'
import Run from './run.js'
import Sandbox from './sandbox.js'
import Stop from './stop.js'
import Version from './version.js'

export const COMMANDS = {
  apply: Apply,
  attach: Attach,
  completion: Completion,
  diff: Diff,
  exec: Exec,
  help: Help,
  log: Log,
  ls: Ls,
  merge: Merge,
  path: Path,
  peek: Peek,
  pr: Pr,
  prune: Prune,
  rm: Rm,
  run: Run,
  sandbox: Sandbox,
  stop: Stop,
  version: Version,
}
