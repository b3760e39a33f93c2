// Before any test runs (vitest globalSetup, once per `npm test`):
// - refuse a checkout under /tmp or $TMPDIR: the sandboxed command may write
//   there, so every test that it cannot write its origin would prove nothing;
// - rebuild what the tests run when a source is newer than it: the CLI tests
//   run the bundles in dist/ and everything runs the helper, so without this
//   an edit to src/ or to the C helper would not be what the tests check.
import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync, realpathSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

const PROJECT = realpathSync(fileURLToPath(new URL('..', import.meta.url)))

/** Each build: what it reads, what it makes, how to make it. */
const BUILDS = [
  {
    what: 'the helper',
    sources: ['native-helpers'],
    skip: [join('native-helpers', 'build')],
    outputs: [join('native-helpers', 'build', 'hmm-helper')],
    command: [process.execPath, join('native-helpers', 'build.js')],
  },
  {
    what: 'the bundles',
    sources: ['src', join('scripts', 'bundle.js'), join('scripts', 'manifest.js'), 'package.json', 'package-lock.json', 'tsconfig.json'],
    skip: [],
    outputs: [join('dist', 'main.bundle.cjs'), join('dist', 'start.bundle.cjs'), join('dist', 'list.bundle.cjs'), 'oclif.manifest.json'],
    command: ['npm', 'run', 'build'],
  },
]

/** Stops the run with one clear message (a thrown error would bury it under a code frame). */
function stop(message: string): never {
  process.stderr.write(`test setup: ${message}\n`)
  process.exit(1)
}

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path)
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep))
}

function refuseTemporary(): void {
  for (const [name, dir] of [
    ['/tmp', '/tmp'],
    ['$TMPDIR', process.env.TMPDIR ?? tmpdir()],
  ]) {
    let real: string
    try {
      real = realpathSync(dir)
    } catch {
      continue
    }
    if (isWithin(PROJECT, real)) {
      stop(
        `hmm's tests refuse to run from ${PROJECT}: it lies under ${name} (${real}), which the sandboxed command may write, ` +
          'so no test that it cannot write its origin would mean anything; clone or copy the checkout elsewhere, e.g. ~/src/hmm',
      )
    }
  }
}

/** The newest modification time of the files under paths (0 when none). */
function newest(paths: string[], skip: string[]): number {
  let latest = 0
  const walk = (rel: string) => {
    if (skip.includes(rel)) return
    const stat = statSync(join(PROJECT, rel), {throwIfNoEntry: false})
    if (!stat) return
    if (stat.isDirectory()) for (const name of readdirSync(join(PROJECT, rel))) walk(join(rel, name))
    else latest = Math.max(latest, stat.mtimeMs)
  }
  for (const path of paths) walk(path)
  return latest
}

function buildIfStale(build: (typeof BUILDS)[number]): void {
  const made = build.outputs.map(rel => statSync(join(PROJECT, rel), {throwIfNoEntry: false})?.mtimeMs ?? -1)
  if (Math.min(...made) >= newest(build.sources, build.skip)) return
  process.stderr.write(`test setup: building ${build.what} (${build.command.join(' ')}): a source is newer than the build\n`)
  const [file, ...args] = build.command
  const result = spawnSync(file, args, {cwd: PROJECT, encoding: 'utf8'})
  if (result.status !== 0 || !build.outputs.every(rel => existsSync(join(PROJECT, rel)))) {
    stop(`building ${build.what} failed, so the tests would run an old build:\n${result.stdout ?? ''}${result.stderr ?? result.error}`)
  }
}

export default function setup(): void {
  refuseTemporary()
  for (const build of BUILDS) buildIfStale(build)
}
