// What every command starts from: the registry and the working directory.
import {realpathSync} from 'node:fs'
import {workTreeTop} from '../git/top.js'
import {HmmError} from '../ui/errors.js'
import {dataDir} from '../platform/index.js'
import {resolveWorkspace} from './resolve.js'
import {Store} from './store.js'
import {Workspace} from './workspace.js'

/** The working directory as a canonical absolute path. */
export function workingDirectory(): string {
  try {
    return realpathSync(process.cwd())
  } catch {
    throw new HmmError('the working directory no longer exists')
  }
}

/** The origin the working directory stands for (how origins are stored): the top of its repository, else itself. */
export function workingOrigin(cwd = workingDirectory()): string {
  return workTreeTop(cwd) ?? cwd
}

export class Context {
  readonly data = dataDir()
  readonly cwd = workingDirectory()
  readonly origin = workingOrigin(this.cwd)
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
