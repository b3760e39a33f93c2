import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // Refuses a checkout under /tmp; rebuilds the helper and bundles when a source is newer.
    globalSetup: ['test/global-setup.ts'],
    // Black-box tests spawn real processes (git, the helper, clones): give them time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
})
