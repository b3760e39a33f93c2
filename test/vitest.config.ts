import {availableParallelism} from 'node:os'
import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    // A path, not a URL's: a checkout under "My Projects" is no "My%20Projects".
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // Refuses a checkout under /tmp; rebuilds the helper and bundles when a source is newer.
    globalSetup: ['test/global-setup.ts'],
    // Black-box tests spawn real processes (git, the helper, clones): give them time. A bound
    // for hangs, not a measure: on a loaded machine (2 cores, both users' runs) a case has taken 62 s.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // A file per core: vitest's default leaves one core to itself (cores - 1: one file at a time on CI's two), but
    // the work of a file is in the processes it spawns, and vitest's own process has next to nothing to do.
    maxWorkers: availableParallelism(),
  },
})
