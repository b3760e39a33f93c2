// The command of the property tests (workspaces.test.ts): carries out a plan
// of edits in the workspace, inside the sandbox, as an agent would. Each
// step names the paths it touched; a commit commits those touched since the
// last one (only them: the origin's staged work is not the command's), as
// git add -A would take them (existing or tracked, not ignored).
import {spawnSync} from 'node:child_process'
import {chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {Buffer} from 'node:buffer'
import process from 'node:process'

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const bytes = base64 => Buffer.from(base64, 'base64')
const parent = path => mkdirSync(dirname(path), {recursive: true})

function git(args, input) {
  const result = spawnSync('git', ['--literal-pathspecs', ...args], {input})
  if (result.status !== 0) throw new Error(`git ${args[0]}: ${result.stderr}`)
  return result.stdout.toString().split('\0').filter(Boolean)
}

function commit(paths, message) {
  const tracked = new Set(git(['ls-files', '-z', '--', ...paths]))
  const candidates = paths.filter(path => tracked.has(path) || lstatSync(path, {throwIfNoEntry: false}))
  if (candidates.length === 0) return
  const ignored = new Set(
    spawnSync('git', ['check-ignore', '-z', '--stdin'], {input: candidates.join('\0') + '\0'})
      .stdout.toString()
      .split('\0'),
  )
  const taken = candidates.filter(path => !ignored.has(path))
  if (taken.length === 0) return
  git(['add', '-A', '--', ...taken])
  // Nothing of theirs changed (an edit undone): no commit.
  if (spawnSync('git', ['--literal-pathspecs', 'diff', '--cached', '--quiet', 'HEAD', '--', ...taken]).status === 0) return
  // A path git knows neither in HEAD nor in the index now (the origin's staged file, moved away) is in no commit.
  const known = new Set([...git(['ls-files', '-z', '--', ...taken]), ...git(['ls-tree', '-r', '-z', '--name-only', 'HEAD', '--', ...taken])])
  git(['commit', '--only', '--no-verify', '-q', '-m', message, '--', ...taken.filter(path => known.has(path))])
}

let touched = new Set()
for (const step of plan) {
  switch (step.op) {
    case 'create':
      parent(step.path)
      writeFileSync(step.path, bytes(step.content))
      chmodSync(step.path, step.exec ? 0o755 : 0o644)
      break
    case 'modify':
      // In place: every name of a hard-linked file changes.
      writeFileSync(step.path, bytes(step.content))
      break
    case 'same-size': {
      const before = statSync(step.path, {bigint: true})
      writeFileSync(step.path, bytes(step.content))
      const ns = before.mtimeNs
      const at = `@${ns / 1000000000n}.${String(ns % 1000000000n).padStart(9, '0')}`
      if (spawnSync('touch', ['-m', '-d', at, '--', step.path]).status !== 0) throw new Error('touch failed')
      break
    }
    case 'delete':
      unlinkSync(step.path)
      break
    case 'rename':
      parent(step.to)
      renameSync(step.path, step.to)
      break
    case 'chmod':
      chmodSync(step.path, step.exec ? 0o755 : 0o644)
      break
    case 'symlink':
      parent(step.path)
      symlinkSync(step.target, step.path)
      break
    case 'commit':
      commit([...touched], step.message)
      touched = new Set()
      break
    default:
      throw new Error(`unknown step ${step.op}`)
  }
  for (const path of step.touched ?? []) touched.add(path)
}
