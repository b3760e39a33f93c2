// What every command starts from: the registry and the working directory.
import {realpathSync} from 'node:fs'
import {HmmError} from '../ui/errors.js'
import {dataDir} from '../platform/index.js'
import {resolveWorkspace} from './resolve.js'
import {Store} from './store.js'
import {Workspace} from './workspace.js'

/** The working directory as a canonical absolute path (how origins are stored). */
export function workingOrigin(): string {
  try {
    return realpathSync(process.cwd())
  } catch {
    throw new HmmError('the working directory no longer exists')
  }
}

export class Context {
  readonly data = dataDir()
  readonly origin = workingOrigin()
  private opened?: Store

  get store(): Store {
    this.opened ??= Store.open(this.data)
    return this.opened
  }

  workspace(key: string | undefined): Workspace {
    return new Workspace(resolveWorkspace(this.store, this.origin, key), this.data)
  }

  close(): void {
    this.opened?.close()
  }
}
