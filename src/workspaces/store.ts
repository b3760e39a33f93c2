// The registry: one SQLite database in the data directory, one row per
// workspace. WAL and a busy timeout let many hmm processes (8 parallel
// `hmm run`s) share it; names are unique per origin by a UNIQUE constraint,
// so two runs racing for one name cannot both win.
import Database from 'better-sqlite3'
import {closeSync, existsSync, mkdirSync, openSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {HmmError} from '../ui/errors.js'

export type CreationState = 'creating' | 'ready'
/** How the origin was recorded: a git top-level (HEAD + fork tree) or a base clone. */
export type OriginKind = 'git' | 'plain'

export interface WorkspaceRow {
  id: string
  name: string | null
  origin: string
  createdAt: number
  state: CreationState
  command: string[]
  /**
   * Set while hmm waits for a command it started here (`hmm run`, `hmm exec`:
   * a count, as several may run at once), or while something left behind
   * held the lock; the lock decides whether it still runs.
   */
  active: boolean
  originKind: OriginKind
  /** The origin's HEAD commit at creation (null: no commits yet or not git). */
  headCommit: string | null
  /** The origin's branch at creation (null: detached or not git). */
  headBranch: string | null
  /** The tree of the origin's files at creation (git origins). */
  forkTree: string | null
  /** The commit last pushed by `hmm pr` (the lease for the next push). */
  pushedCommit: string | null
  /** The -w paths given to run and exec (canonical): every later exec may write them too. */
  writable: string[]
  /** What the workspace held when last looked at (WORK): commits and files not taken back; null: not known. */
  workCommits: number | null
  workFiles: number | null
  /** Set when it was last looked at in the state it was taken back in. */
  workTaken: TakenKind | null
  /** Bytes the clone took on disk when made (0: it shares its blocks; null: not known). */
  size: number | null
  /** A merge of its commits that stopped at conflicts, which the user may still commit (null: none). */
  pendingMerge: PendingMerge | null
  /**
   * The tree of the files `hmm diff` last showed (null: none did): apply,
   * merge and pr take nothing else. Recorded whether or not a process of
   * the workspace ran then: without the namespaces one can live unseen.
   */
  shownTree: string | null
  /** The last commit `hmm log -p` showed (null: none did): merge and pr take no other. */
  shownTip: string | null
  /** The tree of the files `hmm diff --stat` last summed up (null: none did), which is no look at them. */
  statTree: string | null
  /**
   * The agent profile every command run in the workspace had ('' once one
   * ran with none or another; null: not recorded, made before hmm kept it):
   * what any of them left in the tree runs in the commands started there
   * later, so only an agent that alone ran there is told it is sandboxed
   * (app/session.ts).
   */
  onlyAgent: string | null
  /** How the command that ended last ended: its exit status, or the signal that ended it (null: neither known). */
  exitCode: number | null
  exitSignal: number | null
}

/**
 * What `hmm merge` leaves when it stops at conflicts: the user ends that
 * merge in the origin, by hand, without hmm. Listing tells that it ended
 * from `mergeHead` no longer naming `tip`, and asks the origin once whether
 * its HEAD holds `tip`; if so WORK becomes what a merge that had not stopped would have recorded.
 */
export interface PendingMerge {
  /** The commit merged (refs/hmm/<id>). */
  tip: string
  /** The origin's MERGE_HEAD file, which names `tip` until the merge is committed or given up. */
  mergeHead: string
  /** The git that hmm merge ran, checked then (platform/programs.ts): listing runs that one. */
  git: string
  /** The WORK the merge would have recorded, kept current by every later look (workspaces/work.ts). */
  commits: number | null
  files: number | null
  taken: TakenKind | null
}

export type TakenKind = 'merged' | 'applied' | 'pushed'

/**
 * Each entry takes the schema from version i to i + 1; never edit a released one.
 * taken_state and taken_by are no longer read: what was taken back is worked
 * out from the origin each time (workspaces/work.ts).
 */
const MIGRATIONS: string[] = [
  `CREATE TABLE workspaces (
     id            TEXT PRIMARY KEY,
     name          TEXT,
     origin        TEXT NOT NULL,
     created_at    INTEGER NOT NULL,
     state         TEXT NOT NULL CHECK (state IN ('creating', 'ready')),
     command       TEXT NOT NULL,
     active        INTEGER NOT NULL DEFAULT 0,
     origin_kind   TEXT NOT NULL CHECK (origin_kind IN ('git', 'plain')),
     head_commit   TEXT,
     head_branch   TEXT,
     fork_tree     TEXT,
     taken_state   TEXT,
     pushed_commit TEXT,
     UNIQUE (origin, name)
   );
   CREATE INDEX workspaces_by_origin ON workspaces (origin, created_at);`,
  `ALTER TABLE workspaces ADD COLUMN writable TEXT NOT NULL DEFAULT '[]';`,
  `ALTER TABLE workspaces ADD COLUMN taken_by TEXT;
   ALTER TABLE workspaces ADD COLUMN work_commits INTEGER;
   ALTER TABLE workspaces ADD COLUMN work_files INTEGER;
   ALTER TABLE workspaces ADD COLUMN work_taken TEXT;
   ALTER TABLE workspaces ADD COLUMN size INTEGER;`,
  `ALTER TABLE workspaces ADD COLUMN pending_merge TEXT;`,
  `ALTER TABLE workspaces ADD COLUMN shown_tree TEXT;`,
  `ALTER TABLE workspaces ADD COLUMN only_agent TEXT;`,
  `ALTER TABLE workspaces ADD COLUMN shown_tip TEXT;`,
  `ALTER TABLE workspaces ADD COLUMN stat_tree TEXT;`,
  `ALTER TABLE workspaces ADD COLUMN exit_code INTEGER;
   ALTER TABLE workspaces ADD COLUMN exit_signal INTEGER;`,
]

const ADDON = 'better-sqlite3/build/Release/better_sqlite3.node'

/**
 * The addon's path, given to better-sqlite3 directly: its default lookup
 * (the `bindings` package probing a dozen paths) is a noticeable part of
 * `hmm ls`'s start-up. Looked for first in hmm's own node_modules, beside
 * dist/ (this module is dist/workspaces/store.js, or dist/list.bundle.cjs
 * once bundled), which saves Node's module resolution (a millisecond or
 * two); then where Node finds the package (a hoisted install).
 */
function nativeBinding(): string | undefined {
  for (const up of ['..', '../..']) {
    const path = join(import.meta.dirname, up, 'node_modules', ADDON)
    if (existsSync(path)) return path
  }
  try {
    // node:module loaded only here: it brings Node's ES module loader with it.
    const packageJson = process
      .getBuiltinModule('node:module')
      .createRequire(import.meta.filename)
      .resolve('better-sqlite3/package.json')
    const path = join(dirname(packageJson), 'build', 'Release', 'better_sqlite3.node')
    return existsSync(path) ? path : undefined
  } catch {
    return undefined
  }
}

/** The registry's file in the data directory. */
export function registryPath(data: string): string {
  return join(data, 'registry.sqlite')
}

/** Where a command in a workspace runs hmm: its sandbox hides (and covers) hmm's data directory. */
export function hiddenRegistry(path: string): HmmError {
  return new HmmError(`cannot open hmm's registry ${path}: it cannot be read (a command in a workspace may not read hmm's data directory)`)
}

/** How long a statement waits for another hmm's write before "database is locked". */
const BUSY_TIMEOUT = 10_000

/** Opens the registry in WAL mode (many hmm processes at once). */
function openDatabase(path: string): Database.Database {
  try {
    const db = new Database(path, {timeout: BUSY_TIMEOUT, nativeBinding: nativeBinding()})
    useWal(db)
    return db
  } catch (error) {
    if ((error as {code?: string}).code !== 'SQLITE_CANTOPEN') throw error
    // Most often hmm run by a command in a workspace, whose sandbox hides the data directory.
    throw readable(path) ? new HmmError(`cannot open hmm's registry ${path}: ${(error as Error).message}`) : hiddenRegistry(path)
  }
}

function readable(file: string): boolean {
  try {
    closeSync(openSync(file, 'r'))
    return true
  } catch {
    return false
  }
}

/**
 * Switches to WAL, waiting as the busy timeout would. SQLite's switch reads
 * the header, then upgrades that read to a write without calling the busy
 * handler; so while another hmm is making the registry (its write lock held
 * to switch it), a second one would get "database is locked" at once.
 */
function useWal(db: Database.Database): void {
  const end = Date.now() + BUSY_TIMEOUT
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!String((error as {code?: string}).code).startsWith('SQLITE_BUSY') || Date.now() > end) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    }
  }
}

const COLUMNS: Record<keyof WorkspaceRow, string> = {
  id: 'id',
  name: 'name',
  origin: 'origin',
  createdAt: 'created_at',
  state: 'state',
  command: 'command',
  active: 'active',
  originKind: 'origin_kind',
  headCommit: 'head_commit',
  headBranch: 'head_branch',
  forkTree: 'fork_tree',
  pushedCommit: 'pushed_commit',
  writable: 'writable',
  workCommits: 'work_commits',
  workFiles: 'work_files',
  workTaken: 'work_taken',
  size: 'size',
  pendingMerge: 'pending_merge',
  shownTree: 'shown_tree',
  shownTip: 'shown_tip',
  statTree: 'stat_tree',
  onlyAgent: 'only_agent',
  exitCode: 'exit_code',
  exitSignal: 'exit_signal',
}

const SELECT = `SELECT ${Object.entries(COLUMNS)
  .map(([key, column]) => `${column} AS ${key}`)
  .join(', ')} FROM workspaces`

type RawRow = Omit<WorkspaceRow, 'command' | 'active' | 'writable' | 'pendingMerge'> & {
  command: string
  active: number
  writable: string
  pendingMerge: string | null
}

function fromRaw(raw: RawRow): WorkspaceRow {
  return {
    ...raw,
    command: JSON.parse(raw.command) as string[],
    active: raw.active > 0,
    writable: JSON.parse(raw.writable) as string[],
    pendingMerge: raw.pendingMerge === null ? null : (JSON.parse(raw.pendingMerge) as PendingMerge),
  }
}

/** A field as SQLite stores it: booleans as 0/1, lists and records as JSON. */
function toColumn(value: unknown): unknown {
  if (typeof value === 'boolean') return Number(value)
  if (typeof value === 'object' && value !== null) return JSON.stringify(value)
  return value
}

export class Store {
  private constructor(private readonly db: Database.Database) {}

  /** Opens the registry, creating the data directory and schema as needed. */
  static open(data: string): Store {
    try {
      mkdirSync(data, {recursive: true, mode: 0o700})
    } catch (error) {
      // Node's message names the errno and the path it failed on ("EACCES: permission denied, mkdir '/x'"): the reason alone.
      const reason = /^\w+: ([^,]+)/.exec((error as Error).message)?.[1] ?? (error as Error).message
      throw new HmmError(`cannot make hmm's data directory ${data}: ${reason}`)
    }
    return Store.connect(data)
  }

  /** Opens the registry only if it exists: listing must not create anything. */
  static openExisting(data: string): Store | undefined {
    return existsSync(registryPath(data)) ? Store.connect(data) : undefined
  }

  private static connect(data: string): Store {
    const db = openDatabase(registryPath(data))
    db.pragma('synchronous = NORMAL')
    const store = new Store(db)
    store.migrate()
    return store
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', {simple: true}) as number
    if (version > MIGRATIONS.length) {
      throw new HmmError(`the registry ${this.db.name} is from a newer hmm (schema ${version}); upgrade hmm`)
    }
    if (version === MIGRATIONS.length) return
    this.db
      .transaction(() => {
        // Re-read inside the write transaction: another process may have migrated meanwhile.
        const current = this.db.pragma('user_version', {simple: true}) as number
        for (let step = current; step < MIGRATIONS.length; step++) this.db.exec(MIGRATIONS[step])
        this.db.pragma(`user_version = ${MIGRATIONS.length}`)
      })
      .immediate()
  }

  close(): void {
    this.db.close()
  }

  /**
   * Reserves a new workspace in state `creating`. A taken name fails by the
   * UNIQUE constraint, so two racing runs cannot both get it; an ID that
   * collides (1 in 10^9) is drawn again.
   */
  reserve(fields: {name: string | null; origin: string; command: string[]; writable?: string[]; agent?: string}, newId: () => string): WorkspaceRow {
    // Active from the start: the helper holds the lock while the tree is made.
    for (let attempt = 0; ; attempt++) {
      const row = {
        id: newId(),
        name: fields.name,
        origin: fields.origin,
        created_at: Date.now(),
        command: JSON.stringify(fields.command),
        writable: JSON.stringify(fields.writable ?? []),
        // The first command's agent profile ('' for none): see onlyAgent.
        agent: fields.agent ?? '',
      }
      try {
        this.db
          .prepare(
            `INSERT INTO workspaces (id, name, origin, created_at, state, command, origin_kind, active, writable, only_agent)
             VALUES (@id, @name, @origin, @created_at, 'creating', @command, 'plain', 1, @writable, @agent)`,
          )
          .run(row)
        return this.get(row.id)!
      } catch (error) {
        const message = String((error as Error).message)
        if ((error as {code?: string}).code !== 'SQLITE_CONSTRAINT_UNIQUE' && !message.includes('UNIQUE')) throw error
        if (message.includes('workspaces.name')) {
          throw new HmmError(`${fields.origin} already has a workspace named ${fields.name}`)
        }
        if (attempt > 5) throw error
      }
    }
  }

  get(id: string): WorkspaceRow | undefined {
    const raw = this.db.prepare(`${SELECT} WHERE id = ?`).get(id) as RawRow | undefined
    return raw && fromRaw(raw)
  }

  /** Every workspace (of one origin, if given), oldest first. */
  list(origin?: string): WorkspaceRow[] {
    const raws = (
      origin === undefined
        ? this.db.prepare(`${SELECT} ORDER BY created_at, rowid`).all()
        : this.db.prepare(`${SELECT} WHERE origin = ? ORDER BY created_at, rowid`).all(origin)
    ) as RawRow[]
    return raws.map(fromRaw)
  }

  /** Workspaces whose ID starts with the given text. */
  withIdPrefix(prefix: string): WorkspaceRow[] {
    // GLOB, not LIKE: IDs hold no GLOB metacharacters, and the prefix was checked by the caller.
    return (this.db.prepare(`${SELECT} WHERE id GLOB ? ORDER BY created_at`).all(`${prefix}*`) as RawRow[]).map(fromRaw)
  }

  update(id: string, fields: Partial<Omit<WorkspaceRow, 'id' | 'command'>>): void {
    const entries = Object.entries(fields).filter(([, value]) => value !== undefined)
    if (entries.length === 0) return
    const sets = entries.map(([key]) => `${COLUMNS[key as keyof WorkspaceRow]} = @${key}`).join(', ')
    const values = Object.fromEntries(entries.map(([key, value]) => [key, toColumn(value)]))
    this.db.prepare(`UPDATE workspaces SET ${sets} WHERE id = @id`).run({...values, id})
  }

  /**
   * Another command started in the workspace (`hmm exec`; `hmm run`'s own is
   * counted by reserve), with the agent profile `agent` ('' for none).
   * Returns onlyAgent as this command leaves it, in the same statement, so
   * that a command started at once by another hmm is counted either before
   * or after.
   */
  commandStarted(id: string, agent: string): string | null {
    const row = this.db
      .prepare(
        `UPDATE workspaces SET active = active + 1, only_agent = CASE WHEN only_agent = @agent THEN only_agent ELSE '' END
         WHERE id = @id RETURNING only_agent AS onlyAgent`,
      )
      .get({id, agent}) as {onlyAgent: string | null} | undefined
    return row?.onlyAgent ?? null
  }

  /**
   * A command hmm waited for has ended. The count keeps the workspace probed
   * while another hmm's command may still be starting; `lockHeld` (something
   * still holds the lock: a command left running in the background) keeps it
   * probed until a later look finds the lock free. `end`: how it ended, if
   * it started (`hmm ls -l`, `--json`).
   */
  commandEnded(id: string, lockHeld: boolean, end?: {exitCode: number | null; exitSignal: number | null}): void {
    this.db.prepare('UPDATE workspaces SET active = MAX(active - 1, ?) WHERE id = ?').run(lockHeld ? 1 : 0, id)
    if (end) this.update(id, end)
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM workspaces WHERE id = ?').run(id)
  }
}
