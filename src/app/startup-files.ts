// Start-up files are shown to the command read-only (sandbox/home.ts
// STARTUP), and people keep keys in them: `export OPENAI_API_KEY=...` in
// ~/.bashrc, `(setq gptel-api-key "...")` in an editor's. With the
// namespaces the command reads a copy of each such file in which every
// statement that sets a credential (judged as the environment is: by the
// variable's name or by what its value holds, sandbox/env.ts) is comments
// saying so, line for line, bound over the user's; the rest reads as
// outside.
// Without the namespaces nothing can be bound: such a file is unreadable
// instead (unmounted-copies.ts).
import {join} from 'node:path'
import {removedBecause} from '../sandbox/env.js'
import {SHELL_STARTUP, VIM_FILES, VIM_PLUGIN_TREES} from '../sandbox/home.js'
import {readBoundedFile} from '../git/workspace-head.js'
import {canonical, entriesIn} from '../sandbox/paths.js'
import type {Bind} from '../sandbox/policy.js'
import {cleanedCopy} from './cleaned-copy.js'
import {holdsCredential} from '../sandbox/secret-values.js'
import {type Dialect, statements} from './shell-statements.js'

/**
 * Besides the shells' own files (sandbox/home.ts SHELL_STARTUP), each read
 * as its shell reads it: the directories read at start (zsh's ZDOTDIR,
 * oh-my-zsh's custom, fish's conf.d and functions), every file beneath them.
 */
const STARTUP_DIRS = ['.config/zsh', '.oh-my-zsh/custom', '.config/fish/conf.d', '.config/fish/functions']

/** The editors' configs STARTUP shows, where AI plugins keep their keys: files, and directories whose files of these kinds are read. */
const EDITOR_FILES = ['.vimrc', '.emacs', '.emacs.d/init.el']
const EDITOR_DIRS = ['.vim', '.config/nvim']

/**
 * How far a start-up directory is walked: deeper or further files are not
 * ones people write by hand. An editor's own Lua modules lie deeper
 * (nvim/lua/me/plugins/ai/providers/openai.lua), and its plugin managers'
 * trees, others' code, are walked after the rest (attacker's review 26, F3).
 */
const MAX_DEPTH = 4
const MAX_EDITOR_DEPTH = 8
const MAX_FILES = 500

/** Larger files are not start-up scripts people write by hand: one is shown empty. */
const MAX_BYTES = 1 << 20

/** A word that sets a variable anywhere in a statement: `NAME=`, `NAME+=` (after export's or declare's options, in an alias's value, in an env prefix). */
const ASSIGNED = /(?<![\w$.-])([A-Za-z_]\w*)\+?=/g

/** `${NAME:=value}` and `${NAME=value}`, which set NAME where it is unset. */
const DEFAULTED = /\$\{([A-Za-z_]\w*):?=/g

/** fish's `set [-flags] NAME value...` and csh's `setenv NAME value`, at a command's start. */
const SET_COMMAND = /(?:^|[;&|({]|\b(?:and|or|not|then|do|else))\s*(?:set\s+(?:-[\w-]+\s+)*|setenv\s+)([A-Za-z_]\w*)\s+\S/gm

/** A key-like name: api_key, token, secret, password, auth_token (not author, token_cmd). */
const KEY = String.raw`(?:api[_-]?key|token|secret|passw(?:or)?d|passwd|auth(?:[_-]?token)?)s?(?![A-Za-z0-9_])`

/**
 * A key-like setting next to what it holds, 8 characters or more: an
 * editor's `api-key = "X"`, an alias's `--token X`.
 */
const KEYED = new RegExp(String.raw`${KEY}["']?\s*(?:[:=]\s*|\s+)(?:["'][^"'\n]{8,}|[^\s"'=:]{8,})`, 'i')

/** A command's option that gives a token or password as it is (`--token=X`, `--password X`), not a variable's value. */
const KEYED_OPTION = new RegExp(String.raw`(?:^|\s)--?[\w-]*${KEY}(?:=|\s+)["']?[^\s"'=:$\x60]{8,}`, 'i')

/** A heredoc's line that gives a password or token any value (a netrc's `password hunter2`, a YAML's `token: x`). */
const KEYED_BODY = /(password|passwd|token|secret|api[_-]?key)\w*["']?\s*(?:[:=]|\s)\s*\S/i

/** The names the statement sets, in order. */
const namesSet = (text: string) => [ASSIGNED, DEFAULTED, SET_COMMAND].flatMap(pattern => [...text.matchAll(pattern)].map(([, name]) => name))

/** The comment a statement holding a credential becomes, on each of its lines, naming what it sets; undefined when it holds none. */
function leftOut(text: string, rest: string): string | undefined {
  const names = namesSet(text)
  const credential = names.find(name => removedBecause(name, '') === 'credential')
  const holds =
    holdsCredential(text) || KEYED_OPTION.test(text) || (/^\s*alias\s/.test(text) && KEYED.test(text)) || (text.includes('<<') && KEYED_BODY.test(rest))
  if (credential === undefined && !holds) return undefined
  const name = credential ?? names[0]
  return name === undefined ? '# hmm: a line that holds a credential, left out' : `# hmm: a line that sets ${name}, left out`
}

/**
 * The text with each statement that sets or holds a credential made
 * comments, a line for each of its lines (so a shell's error names about
 * the same line); from where the file cannot be read as a whole statement
 * (a quote or heredoc left open) every line is a comment. Undefined when
 * no statement holds one.
 */
export function withoutCredentialLines(text: string, dialect: Dialect = 'sh'): string | undefined {
  const lines = text.split('\n')
  let changed = false
  for (const {first, last, complete} of statements(text, dialect)) {
    const own = lines.slice(first, last + 1).join('\n')
    const comment = complete ? leftOut(own, own.slice(own.indexOf('\n') + 1)) : '# hmm: a line the shell would read with the next, left out'
    if (comment === undefined || (!complete && own.trim() === '')) continue
    changed = true
    lines.fill(comment, first, last + 1)
  }
  return changed ? lines.join('\n') : undefined
}

/** How each editor's config language writes a comment, by the file's name. */
function commentOf(name: string): string {
  if (/\.lua$/.test(name)) return '--'
  if (/(^|\/)\.?(vimrc|gvimrc)$|\.vim$/.test(name)) return '"'
  if (/\.el$|(^|\/)\.emacs$/.test(name)) return ';;'
  return '#'
}

/**
 * An editor's config (vim's, neovim's, emacs's) with each line that holds
 * a credential by its shape, or names a key-like setting next to a string
 * of 8 or more characters (`vim.env.OPENAI_API_KEY = "..."`,
 * `(setq gptel-api-key "...")`), made a comment in its language; undefined
 * when no line does.
 */
export function withoutCredentialSettings(name: string, text: string): string | undefined {
  const comment = `${commentOf(name)} hmm: a line that holds a credential, left out`
  let changed = false
  const lines = text.split('\n').map(line => {
    if (!holdsCredential(line) && !(KEYED.test(line) && /(["'])[^"'\n]{8,}\1/.test(line))) return line
    changed = true
    return comment
  })
  return changed ? lines.join('\n') : undefined
}

/**
 * The files beneath a start-up directory (links to files too; no linked
 * directory followed), within the bounds; the trees named `later`, after
 * the rest.
 */
function filesBeneath(dir: string, {wanted = /(?:)/, depth: maxDepth = MAX_DEPTH, later = [] as string[]} = {}): string[] {
  const files: string[] = []
  const deferred: string[] = []
  const walk = (at: string, depth: number) => {
    for (const entry of entriesIn(at)) {
      if (files.length >= MAX_FILES) return
      const path = join(at, entry.name)
      if (entry.isDirectory()) {
        if (depth === 1 && later.includes(entry.name)) deferred.push(path)
        else if (depth < maxDepth) walk(path, depth + 1)
      } else if (wanted.test(entry.name)) files.push(path)
    }
  }
  walk(dir, 1)
  for (const path of deferred) walk(path, 2)
  return files
}

/**
 * The cleaned copies, made in the workspace's directory `root` for this
 * command, each bound over the user's file (where its link leads), for the
 * start-up files that set or hold a credential.
 */
export function startupFileBinds(root: string, home: string): Bind[] {
  const shells = [...SHELL_STARTUP.map(rel => join(home, rel)), ...STARTUP_DIRS.flatMap(rel => filesBeneath(join(home, rel)))]
  const editors = [
    ...EDITOR_FILES.map(rel => join(home, rel)),
    ...EDITOR_DIRS.flatMap(rel => filesBeneath(join(home, rel), {wanted: VIM_FILES, depth: MAX_EDITOR_DEPTH, later: VIM_PLUGIN_TREES})),
  ]
  const clean = (file: string, text: string) =>
    shells.includes(file) ? withoutCredentialLines(text, file.endsWith('.fish') ? 'fish' : 'sh') : withoutCredentialSettings(file, text)
  const binds: Bind[] = []
  const done = new Set<string>()
  for (const file of [...shells, ...editors]) {
    // Resolved once: most of these files do not exist, and each failed resolution costs an exception per missing part.
    const real = canonical(file)
    if (done.has(real)) continue
    done.add(real)
    const text = readBoundedFile(real, MAX_BYTES)
    // A file too large to clean is shown empty: what it holds is not known.
    const cleaned = text === undefined ? undefined : text === null ? '' : clean(file, text)
    if (cleaned === undefined) continue
    binds.push(cleanedCopy(join(root, 'startup'), String(binds.length), cleaned, real))
  }
  return binds
}
