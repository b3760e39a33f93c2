import Database from 'better-sqlite3'
import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {resolveWorkspace} from '../../src/workspaces/resolve.js'
import {registryPath, Store} from '../../src/workspaces/store.js'
import {newId} from '../../src/workspaces/ids.js'
import {scratchDir} from '../world.js'

function freshData(): string {
  return join(scratchDir('store'), 'data')
}

describe('the registry', () => {
  it('is a WAL SQLite file with a schema version', () => {
    const data = freshData()
    Store.open(data).close()
    const db = new Database(registryPath(data), {readonly: true})
    expect(db.pragma('journal_mode', {simple: true})).toBe('wal')
    expect(db.pragma('user_version', {simple: true})).toBe(9)
    db.close()
  })

  it('keeps a registry of schema 1 working: its workspaces are read, with no -w paths', () => {
    const data = freshData()
    mkdirSync(data, {recursive: true})
    const db = new Database(registryPath(data))
    // Schema 1 as released: frozen here on purpose.
    db.exec(`CREATE TABLE workspaces (
       id TEXT PRIMARY KEY, name TEXT, origin TEXT NOT NULL, created_at INTEGER NOT NULL,
       state TEXT NOT NULL CHECK (state IN ('creating', 'ready')), command TEXT NOT NULL,
       active INTEGER NOT NULL DEFAULT 0, origin_kind TEXT NOT NULL CHECK (origin_kind IN ('git', 'plain')),
       head_commit TEXT, head_branch TEXT, fork_tree TEXT, taken_state TEXT, pushed_commit TEXT, UNIQUE (origin, name));
     CREATE INDEX workspaces_by_origin ON workspaces (origin, created_at);
     INSERT INTO workspaces (id, name, origin, created_at, state, command, origin_kind) VALUES ('k3xq9a', 'old', '/a', 1, 'ready', '["sh"]', 'plain');
     PRAGMA user_version = 1;`)
    db.close()
    const store = Store.open(data)
    expect(store.get('k3xq9a')).toMatchObject({
      name: 'old',
      origin: '/a',
      command: ['sh'],
      writable: [],
      active: false,
      workCommits: null,
      workFiles: null,
      workTaken: null,
      size: null,
      onlyAgent: null,
    })
    store.update('k3xq9a', {writable: ['/w']})
    expect(store.get('k3xq9a')?.writable).toEqual(['/w'])
    // Who ran there before is not known: as if a command without the agent's profile had.
    expect(store.commandStarted('k3xq9a', 'claude')).toBe('')
    store.close()
  })

  it('keeps the agent profile every command run in a workspace had, until one without it runs there', () => {
    const store = Store.open(freshData())
    const {id} = store.reserve({name: null, origin: '/a', command: ['claude'], agent: 'claude'}, newId)
    expect(store.get(id)?.onlyAgent).toBe('claude')
    expect(store.commandStarted(id, 'claude')).toBe('claude')
    expect(store.commandStarted(id, 'codex')).toBe('')
    expect(store.commandStarted(id, 'claude')).toBe('')
    const plain = store.reserve({name: null, origin: '/a', command: ['npm', 'install']}, newId)
    expect(store.commandStarted(plain.id, 'claude')).toBe('')
    expect(store.get(plain.id)?.active).toBe(true)
    store.close()
  })

  it('refuses a registry from a newer hmm', () => {
    const data = freshData()
    Store.open(data).close()
    const db = new Database(registryPath(data))
    db.pragma('user_version = 99')
    db.close()
    expect(() => Store.open(data)).toThrow(/newer hmm/)
  })

  it('keeps names unique per origin, not across origins', () => {
    const store = Store.open(freshData())
    store.reserve({name: 'p', origin: '/a', command: ['true']}, newId)
    store.reserve({name: 'p', origin: '/b', command: ['true']}, newId)
    store.reserve({name: null, origin: '/a', command: ['true']}, newId)
    store.reserve({name: null, origin: '/a', command: ['true']}, newId)
    expect(() => store.reserve({name: 'p', origin: '/a', command: ['true']}, newId)).toThrow('/a already has a workspace named p')
    expect(store.list('/a')).toHaveLength(3)
    store.close()
  })

  it('resolves a name, a whole ID, a unique prefix, and the latest', () => {
    const store = Store.open(freshData())
    const first = store.reserve({name: 'parser', origin: '/a', command: ['x']}, newId)
    const second = store.reserve({name: null, origin: '/a', command: ['x']}, newId)
    const elsewhere = store.reserve({name: 'other', origin: '/b', command: ['x']}, newId)
    expect(resolveWorkspace(store, '/a', 'parser').id).toBe(first.id)
    expect(resolveWorkspace(store, '/a', elsewhere.id).id).toBe(elsewhere.id)
    expect(resolveWorkspace(store, '/a', undefined).id).toBe(second.id)
    expect(() => resolveWorkspace(store, '/a', 'other')).toThrow('no workspace other')
    expect(() => resolveWorkspace(store, '/c', undefined)).toThrow('/c has no workspaces')
    expect(() => resolveWorkspace(store, '/a', '../../etc')).toThrow('no workspace ../../etc')
    expect(() => resolveWorkspace(store, '/a', '')).toThrow("no workspace ''")
    const prefix = first.id.slice(0, 4)
    const sharing = [first, second, elsewhere].filter(row => row.id.startsWith(prefix))
    if (sharing.length === 1) expect(resolveWorkspace(store, '/a', prefix).id).toBe(first.id)
    store.close()
  })

  it('says when a prefix matches more than one ID', () => {
    const store = Store.open(freshData())
    const ids = Array.from({length: 40}, () => store.reserve({name: null, origin: '/a', command: ['x']}, newId).id)
    const shared = ids.map(id => id[0]).find((c, i, all) => all.indexOf(c) !== i)!
    expect(() => resolveWorkspace(store, '/a', shared)).toThrow(`${shared} is the start of more than one workspace's ID`)
    store.close()
  })

  it("scopes a prefix to the working directory's workspaces; a whole ID reaches any", () => {
    const store = Store.open(freshData())
    store.reserve({name: null, origin: '/home/me/proj', command: ['x']}, () => 'm3abcd')
    expect(() => resolveWorkspace(store, '/home/me', 'm3')).toThrow('no workspace m3')
    expect(resolveWorkspace(store, '/home/me/proj', 'm3').id).toBe('m3abcd')
    expect(resolveWorkspace(store, '/home/me', 'm3abcd').id).toBe('m3abcd')
    store.close()
  })
})
