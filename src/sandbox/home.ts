// The composed home (SPEC "Sandbox", "Reading"): the home the command sees
// is built from what work needs, not the user's home less a list of
// secrets, so a secret no list names is not there either. Plain data here;
// the helper builds it (native-helpers/home.c), `hmm sandbox` prints it.
//
// What is there: the places the command may write (its caches' layers,
// agents' layers, -w and `write` paths, the workspace), toolchains and the
// programs on PATH, the shell's and editors' start-up files, git's own
// settings (credentials are taken out of them by app/git-credentials.ts),
// the config file's `show`, and what an agent profile gives back. All of
// it read-only but the places written (the helper's read-only pass). What
// is not named is absent, as on a new machine.
import {lstatSync, readlinkSync, statSync} from 'node:fs'
import {basename, isAbsolute, join, relative, sep} from 'node:path'
import {canonical, canonicalAmong, entriesIn, isWithin, linksOnTheWay, unique} from './paths.js'

/**
 * Where toolchains and the programs they install live: version managers,
 * language installs, global package prefixes. Programs and libraries that
 * the command runs as the user would, no credentials: those kept beside
 * them (a registry's login) are in files of their own that policy.ts
 * SECRETS names, which stay covered inside a kept place.
 */
export const TOOLCHAINS = [
  // Node: nvm, volta, fnm, n, bun, deno, pnpm's and npm's global prefixes by their usual names.
  '.nvm',
  '.volta',
  '.fnm',
  '.local/share/fnm',
  '.n',
  '.bun',
  '.deno',
  '.local/share/pnpm',
  '.npm-global',
  '.npm-packages',
  '.yarn',
  // Python: pyenv, pipx, uv's tools and Pythons, pip --user installs, pipenv's and poetry's environments.
  '.pyenv',
  '.local/bin',
  '.local/lib',
  '.local/pipx',
  '.local/share/pipx',
  '.local/share/uv',
  '.local/share/virtualenvs',
  '.local/share/pypoetry',
  // Go's programs and module cache (a layer with the namespaces, policy.ts LAYERED_ONLY), never ~/go/src: GOPATH's
  // projects are other projects (attacker's review 24, F3). Java and other JVM languages, Ruby, Haskell, OCaml,
  // Elixir, Nim, Zig; asdf, mise and their kin.
  'go/bin',
  'go/pkg/mod',
  '.sdkman',
  '.jdks',
  '.rbenv',
  '.rvm',
  '.ghcup',
  '.cabal/bin',
  '.opam',
  '.mix',
  '.nimble',
  '.asdf',
  '.local/share/mise',
  '.local/share/rtx',
  '.local/share/aquaproj-aqua',
  '.nix-profile',
  '.local/state/nix/profile',
  'bin',
  // Claude Code's and other agents' own installs (their logins are in their profiles' places, not here).
  '.local/share/claude',
  '.local/share/cursor-agent',
  '.opencode/bin',
]

/**
 * Start-up files of the shells, editors and terminals' tools, and git's
 * own settings: read at every start, hold preferences. Shells' histories
 * are elsewhere (policy.ts SECRETS); git's credentials are taken out of
 * the copies the command sees (app/git-credentials.ts).
 */
export const SHELL_STARTUP = [
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.config/fish/config.fish',
]

/** All of them: the shells' files above, the editors', the terminal tools' and git's (their directories: STARTUP_DIRS). */
export const STARTUP = [
  ...SHELL_STARTUP,
  '.inputrc',
  '.editorconfig',
  '.dircolors',
  '.vimrc',
  '.nanorc',
  '.emacs',
  '.emacs.d/init.el',
  '.tmux.conf',
  '.selected_editor',
  '.gitconfig',
  '.gitignore',
  '.gitignore_global',
  '.gitattributes',
  '.config/git/config',
  '.config/git/ignore',
  '.config/git/attributes',
]

/** Vim's and Neovim's start-up files by name: what the cleaner (app/startup-files.ts) reads of their directories. */
export const VIM_FILES = /\.(vim|lua)$|^g?vimrc$/

/** Plugin managers' trees: others' code, which the cleaner reads after the user's own files. */
export const VIM_PLUGIN_TREES = ['pack', 'bundle', 'plugged']

/** Vim's and Neovim's: their start-up files, and the trees of their runtime path (`:help 'runtimepath'`) and plugin managers. */
const VIM = {
  files: VIM_FILES,
  trees: [
    ...['pack', 'autoload', 'plugin', 'ftplugin', 'ftdetect', 'syntax', 'indent', 'colors', 'compiler', 'after', 'keymap', 'lang', 'spell', 'doc'],
    ...['lua', 'queries', 'parser', 'rplugin', 'bundle', 'plugged'],
  ],
}

/** zsh's: its five start-up files by name, scripts by type (`aliases.zsh`, `.p10k.zsh`, `oh-my-zsh.sh`). */
const ZSH_FILES = /\.(zsh|sh)$|^\.z(shrc|shenv|profile|login|logout)$/

/**
 * The start-up directories of shells and editors, each kept not whole but
 * for what its shell or editor reads at start: files by type, trees by
 * name. What else is there is their saved state, absent as the rest of the
 * home: vim's undo, swap and backup files (the text of every file edited
 * anywhere), views, sessions, a viminfo; a history in ZDOTDIR under any
 * name; oh-my-zsh's cache and log (attacker's review 24, F2).
 */
const STARTUP_DIRS: Record<string, {files: RegExp; trees: string[]}> = {
  '.vim': VIM,
  '.config/nvim': VIM,
  // fpath's and plugin managers' usual places in ZDOTDIR (functions have no type of their own).
  '.config/zsh': {files: ZSH_FILES, trees: ['functions', 'completions', 'conf.d', 'plugins']},
  '.oh-my-zsh': {files: ZSH_FILES, trees: ['lib', 'plugins', 'themes', 'tools', 'custom']},
  // fish reads *.fish here and nothing else.
  '.config/fish/conf.d': {files: /\.fish$/, trees: []},
  '.config/fish/functions': {files: /\.fish$/, trees: []},
}

/**
 * The entries of the start-up directories composeHome keeps. A directory
 * reached through a link is not listed, as no folder is kept through one
 * (see composeHome): an earlier run that could write where the link lies
 * would otherwise show the next every script of a folder it names.
 */
function startupEntries(home: string): string[] {
  return Object.entries(STARTUP_DIRS).flatMap(([rel, {files, trees}]) => {
    const dir = join(home, rel)
    if (canonical(dir) !== dir) return []
    // A link among them is judged as any link of the home (composeHome): kept where it leads to a file of its name.
    return entriesIn(dir)
      .filter(entry => (entry.isDirectory() ? trees.includes(entry.name) : (entry.isFile() || entry.isSymbolicLink()) && files.test(entry.name)))
      .map(entry => join(dir, entry.name))
  })
}

export interface HomeEntry {
  /** Canonical, beneath the home. */
  path: string
  /** Where it comes from, for hmm sandbox. */
  why: string
  /** The user asked for it (a place to write, `show`): one holding the home keeps the whole home. */
  asked?: boolean
}

export interface ComposedHome {
  /** The home, canonical. */
  dir: string
  /** Bound in as it is (what lies beneath comes with it), outermost first. */
  keep: HomeEntry[]
  /** Symbolic links made again as they are (a dotfile linked from elsewhere in the home). */
  links: string[]
}

export interface HomeInput {
  home: string
  /** The caches and agents' places the command writes in layers of its workspace (canonical). */
  layered: string[]
  /** What else it may write, in place (canonical): -w, write, temporary directories. */
  writable: string[]
  /** The config file's `show` and what an agent's profile gives back (`unhide`). */
  show: string[]
  /** Directories of $PATH, as the environment names them. */
  path: string[]
  /** The command, where it is named by its path (canonical): its file, not its folder. */
  programs: string[]
}

/** The package a script in node_modules belongs to (its directory), if it is one. */
function packageOf(program: string): string | undefined {
  const parts = program.split(sep)
  const at = parts.lastIndexOf('node_modules')
  if (at < 0 || at + 1 >= parts.length - 1) return undefined
  return parts.slice(0, at + (parts[at + 1].startsWith('@') ? 3 : 2)).join(sep)
}

/** A name as the start-up files and their copies in a dotfiles folder spell it: `.bashrc`, `bashrc`. */
const bareName = (path: string) => basename(path).replace(/^\./, '')

/** A program is a file: the file, and its package where it is a script in node_modules, never the folder it lies in. */
function programFiles(program: string): string[] {
  const place = packageOf(program)
  return place ? [program, place] : [program]
}

const isFile = (path: string) => statSync(path, {throwIfNoEntry: false})?.isFile() === true

/**
 * The home as the command sees it, or undefined where nothing would be
 * left out: a place kept is the home itself (-w ~), or holds it.
 */
export function composeHome(input: HomeInput): ComposedHome | undefined {
  const home = canonical(input.home)
  if (home === '/') return undefined
  const wanted: HomeEntry[] = []
  const want = (paths: string[], why: string, asked = false) => wanted.push(...paths.map(path => ({path, why, asked})))
  want(input.layered, 'a layer of the workspace over yours', true)
  want(input.writable, 'written in place', true)
  want(input.show, 'shown, read-only', true)
  want(
    TOOLCHAINS.map(rel => join(home, rel)),
    'toolchain, read-only',
  )
  want([...STARTUP.map(rel => join(home, rel)), ...startupEntries(home)], 'start-up file, read-only')
  const pathDirs = input.path.filter(dir => isAbsolute(dir))
  want(pathDirs, 'on PATH, read-only')
  // Named by the user: kept, through links too.
  want(input.programs.flatMap(programFiles), 'the command, read-only', true)
  // A link in a PATH directory shows where it leads only where that is kept anyway (~/.local/bin/claude to
  // ~/.local/share/claude, a toolchain), or outside the home: a link an earlier run could re-point (-w ~/tools once,
  // a cache under landlock-only) would make later runs show any file of the home (attacker's reviews 13 and 14).
  const keep = new Map<string, string>()
  const links = new Set<string>()
  // Resolved as one batch: most entries are missing, and the way to them (the home) is resolved once.
  const known = new Map<string, string>()
  for (const {path, why, asked} of wanted) {
    const real = canonicalAmong(path, known)
    if (isWithin(home, real)) {
      if (asked) return undefined
      continue
    }
    // A place to write may be made by the helper (a cache the user has not got yet): kept whether there now or not.
    if (!isWithin(real, home) || (!asked && !lstatSync(real, {throwIfNoEntry: false}))) continue
    const linked = linksOnTheWay(path)
      .slice(0, -1)
      .filter(link => isWithin(link, home) && link !== home)
    // A link of the home leads to a file of yours of the same name (~/.bashrc to ~/dotfiles/bashrc), never a folder nor
    // another file: a command that could once write where such a link lies (-w ~/.emacs.d) would make the next run
    // show it ~/Documents, or ~/.kaggle/kaggle.json as init.el. None lying where the command writes in place now.
    if (
      !asked &&
      linked.length > 0 &&
      (!isFile(real) || bareName(real) !== bareName(path) || linked.some(link => input.writable.some(place => isWithin(link, place))))
    )
      continue
    for (const link of linked) links.add(link)
    if (!keep.has(real)) keep.set(real, why)
  }
  const paths = [...keep.keys()].sort()
  const outermost = paths.filter(path => !paths.some(other => other !== path && isWithin(path, other)))
  return {
    dir: home,
    keep: outermost.map(path => ({path, why: keep.get(path)!})),
    links: unique([...links]).filter(link => !outermost.some(path => isWithin(link, path))),
  }
}

/** The composed home as a short tree, for hmm sandbox: each entry relative to the home, with where it comes from. */
export function describeHome(composed: ComposedHome): string[] {
  const rel = (path: string) => `~/${relative(composed.dir, path)}`
  return [
    ...composed.keep.map(entry => `${rel(entry.path)} (${entry.why})`),
    ...composed.links.map(link => `${rel(link)} -> ${readlinkSync(link)} (a link of yours)`),
  ].sort()
}
