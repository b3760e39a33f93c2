// Start-up files are shown to the command read-only (sandbox/home.ts
// STARTUP), and people keep keys in them: `export OPENAI_API_KEY=...` in
// ~/.bashrc. With the namespaces the command reads a copy of each such file
// in which every line that sets a credential (judged as the environment is:
// by the variable's name or by what its value holds, sandbox/env.ts) is a
// comment saying so, bound over the user's; the rest reads as outside.
// Without the namespaces nothing is bound and the files read as they are
// (SECURITY.md says so).
import {closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {removedBecause} from '../sandbox/env.js'
import {canonical} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'
import {holdsCredential} from '../sandbox/secret-values.js'

/**
 * The start-up files people put settings (and keys) in, beneath the home:
 * the top-level ones of sandbox/home.ts STARTUP and the files of the
 * directories read at start (fish's conf.d, zsh's ZDOTDIR, oh-my-zsh's
 * custom). Files only: a folder's own files are not read.
 */
const STARTUP_FILES = [
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_aliases',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.config/fish/config.fish',
]
const STARTUP_DIRS = ['.config/fish/conf.d', '.config/zsh', '.oh-my-zsh/custom']

/** Larger files are not start-up scripts people write by hand; read no more of one. */
const MAX_BYTES = 1 << 20

/** A line that sets a variable: sh's `[export] NAME=`, bash's and zsh's declare/typeset, fish's `set [-flags] NAME`, csh's `setenv NAME`. */
const ASSIGNMENT = [
  /^\s*(?:(?:export|readonly|local|declare(?:\s+-\w+)*|typeset(?:\s+-\w+)*)\s+)?([A-Za-z_]\w*)=(.*)$/,
  /^\s*set\s+(?:-\w+\s+)*([A-Za-z_]\w*)\s+(.*)$/,
  /^\s*setenv\s+([A-Za-z_]\w*)\s+(.*)$/,
]

const unquoted = (value: string) => /^\s*(["'])(.*)\1\s*(?:#.*)?$/.exec(value)?.[2] ?? value.trim()

/** What a line holding a credential becomes: a comment naming what it set, if it set a variable. */
function leftOut(line: string): string | undefined {
  for (const pattern of ASSIGNMENT) {
    const [, name, value] = pattern.exec(line) ?? []
    if (name === undefined) continue
    if (removedBecause(name, unquoted(value)) === 'credential') return `# hmm: a line that sets ${name}, left out`
    break
  }
  return holdsCredential(line) ? '# hmm: a line that holds a credential, left out' : undefined
}

/** The text with each line that sets or holds a credential made a comment; undefined when no line does. */
export function withoutCredentialLines(text: string): string | undefined {
  let changed = false
  const lines = text.split('\n').map(line => {
    const comment = leftOut(line)
    if (comment === undefined) return line
    changed = true
    return comment
  })
  return changed ? lines.join('\n') : undefined
}

/** A regular file's text, read through one descriptor (no link followed at its last step), or undefined. */
function readSmallFile(path: string): string | undefined {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.size > MAX_BYTES) return undefined
    const buffer = Buffer.alloc(stat.size)
    const read = readSync(fd, buffer, 0, stat.size, 0)
    return buffer.toString('utf8', 0, read)
  } finally {
    closeSync(fd)
  }
}

/** The files of a start-up directory, one level deep. */
function filesOf(dir: string): string[] {
  try {
    return readdirSync(dir).map(name => join(dir, name))
  } catch {
    return []
  }
}

/**
 * The cleaned copies, made in the workspace's directory `root` for this
 * command, each bound over the user's file (where its link leads), for the
 * start-up files that set or hold a credential.
 */
export function startupFileBinds(root: string, home: string): Bind[] {
  const candidates = [...STARTUP_FILES.map(rel => join(home, rel)), ...STARTUP_DIRS.flatMap(rel => filesOf(join(home, rel)))]
  const binds: Bind[] = []
  for (const file of candidates) {
    const text = readSmallFile(canonical(file))
    const cleaned = text === undefined ? undefined : withoutCredentialLines(text)
    if (cleaned === undefined) continue
    const dir = join(root, 'startup')
    mkdirSync(dir, {recursive: true, mode: 0o700})
    const copy = join(dir, String(binds.length))
    const next = `${copy}.hmm-${process.pid}`
    writeFileSync(next, cleaned, {mode: 0o600})
    renameSync(next, copy)
    binds.push({source: copy, target: canonical(file)})
  }
  return binds
}
