// What the everyday commands cost, counted rather than timed: the programs
// hmm starts for them, as HMM_DEBUG names each one (a git by its
// subcommand, a confined start by its helper's argv). Each count is a
// piece of work done again for nothing when it grows (issue 9's first diff
// read the tree twice): `npm run bench` says what that costs in time.
import {existsSync, lstatSync, mkdirSync} from 'node:fs'
import {execa, execaSync} from 'execa'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, PROJECT, READERS_SLOWER, workspaceLine, World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** How many of the lines HMM_DEBUG wrote to stderr start with `what`. */
function count(stderr: string, what: string): number {
  return stderr.split('\n').filter(line => line.startsWith(`hmm: debug: ${what}`)).length
}

/**
 * `hmm run` in a repository, its command changing one file, with
 * HMM_DEBUG: its result, and what it said once the command ended. With
 * `installedInHome`, the hmm run is a copy of this checkout in ~/hmm, as
 * a user clones it.
 */
async function runChangingOneFile(name: string, installedInHome = false) {
  world = new World(name)
  await world.gitRepo()
  let bin = BIN
  if (installedInHome) {
    const installed = join(world.home, 'hmm')
    mkdirSync(join(installed, 'native-helpers'), {recursive: true})
    for (const part of ['bin', 'dist', 'node_modules', 'package.json', 'native-helpers/build'])
      execaSync('cp', ['-al', join(PROJECT, part), join(installed, part)])
    bin = join(installed, 'bin', 'run.js')
  }
  const result = await execa(process.execPath, [bin, 'run', 'sh', '-c', 'echo more >> README.md'], {
    cwd: world.origin,
    env: {...world.env, HMM_DEBUG: '1'},
    extendEnv: false,
    reject: false,
  })
  const [, ended] = result.stderr.split(/^hmm: workspace .*\n/m)
  return {result, ended}
}

/** Said in the names of the tests READERS_SLOWER skips. */
const slower = READERS_SLOWER ? ` (skipped: ${READERS_SLOWER})` : ''

describe('hmm run in a repository', () => {
  it.skipIf(READERS_SLOWER !== undefined)(
    `writes the tree of what the workspace holds once when the command exits, reading its files in one sandbox${slower}`,
    async () => {
      const {result, ended} = await runChangingOneFile('cost-run')
      expect(result.exitCode).toBe(0)
      expect(result.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(1 file\)$/m)
      // The tree written by a git of its own, or by the git in the sandbox that read the files.
      const trees = count(ended, 'git write-tree:') + [...ended.matchAll(/"\$git" write-tree/g)].length
      expect({trees, sandboxes: count(ended, 'confined:')}).toEqual({trees: 1, sandboxes: 1})
    },
  )

  it.skipIf(READERS_SLOWER !== undefined)(`sets up the sandbox that reads the files while it records the command's end, not after${slower}`, async () => {
    const {result, ended} = await runChangingOneFile('cost-run-ahead')
    expect(result.exitCode).toBe(0)
    expect(result.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(1 file\)$/m)
    const sandboxes = ended.split('\n').filter(line => line.startsWith('hmm: debug: confined:'))
    expect(sandboxes.map(line => line.endsWith(' (set up ahead)'))).toEqual([true])
  })

  it('compares no tree with itself when the command changed nothing', async () => {
    world = new World('cost-run-nothing')
    await world.gitRepo()
    const result = await world.hmm(['run', 'true'], {env: {...world.env, HMM_DEBUG: '1'}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(-\)$/m)
    expect(count(result.stderr, 'git diff-tree:')).toBe(0)
  })

  it("checks the programs it runs against the command's policy only, building no other", async () => {
    world = new World('cost-run-one-policy')
    await world.gitRepo()
    const result = await world.hmm(['run', 'true'], {env: {...world.env, HMM_DEBUG: '1'}})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(count(result.stderr, 'checking the programs hmm runs against')).toBe(0)
  })

  it('takes the stat data of a file the command touched but did not change, so that no later look reads it again', async () => {
    world = new World('cost-run-touched')
    await world.gitRepo()
    const result = await world.hmm(['run', 'sh', '-c', 'sleep 1.1; touch README.md'])
    expect(result.exitCode, result.stderr).toBe(0)
    const {id, tree} = workspaceLine(result.stderr)
    const entry = await world.sh(`GIT_DIR='${join(world.dataDir, id, 'git')}' git ls-files --debug README.md`)
    const recorded = /mtime: (\d+):/.exec(entry)?.[1]
    expect(recorded).toBe(String(Math.floor(lstatSync(join(tree, 'README.md')).mtimeMs / 1000)))
  })

  it('reads the files in one sandbox also where hmm is installed in the home, which the composed home leaves out', async () => {
    // Its helper, which the reading sandbox runs, lies in the home.
    const {result, ended} = await runChangingOneFile('cost-run-installed', true)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(count(ended, 'confined:')).toBe(1)
  })
})

describe('hmm run in a plain directory', () => {
  it("searches each secret's place once, for the origin's check, the command's policy and the reading of its work", async () => {
    world = new World('cost-run-secrets')
    world.file('a.txt', 'a\n')
    // Read by the command as a copy without its login (app/tool-configs.ts): its policy gives the file back, the others' not.
    world.write(join(world.home, '.npmrc'), 'registry=https://registry.example.com/\n')
    const debug = {env: {...world.env, HMM_DEBUG: '1'}}
    /** How many places each search HMM_DEBUG names looked at. */
    const searches = (stderr: string) => [...stderr.matchAll(/^hmm: debug: searched (\d+) secrets' places/gm)].map(([, n]) => Number(n))
    const run = await world.hmm(['run', 'sh', '-c', 'echo b > b.txt'], debug)
    expect(run.exitCode, run.stderr).toBe(0)
    // The origin's check gives nothing back: every place, once.
    expect(searches(run.stderr)).toHaveLength(1)
    const exec = await world.hmm(['exec', workspaceLine(run.stderr).id, 'sh', '-c', 'echo c > c.txt'], debug)
    expect(exec.exitCode, exec.stderr).toBe(0)
    // The command's policy, then the reader's, which hides the .npmrc too: only it is searched again.
    expect(searches(exec.stderr).slice(1)).toEqual([1])
  })

  it('asks the helper about the sandbox layers once, first, so that the answer is in before the policy is', async () => {
    world = new World('cost-run-layers')
    world.file('a.txt', 'a\n')
    const debug = {env: {...world.env, HMM_DEBUG: '1'}}
    const run = await world.hmm(['run', 'true'], debug)
    const exec = await world.hmm(['exec', workspaceLine(run.stderr).id, 'true'], debug)
    for (const result of [run, exec]) {
      expect(result.exitCode, result.stderr).toBe(0)
      const lines = result.stderr.split('\n')
      const asked = lines.findIndex(line => line === 'hmm: debug: asked the helper which sandbox layers this system has')
      // Before the secrets are searched (the first of the policy's work), not after.
      expect(asked, result.stderr).toBeGreaterThan(-1)
      expect(asked, result.stderr).toBeLessThan(lines.findIndex(line => /^hmm: debug: (searched \d+ secrets' places|made the sandbox policy)/.test(line)))
      expect(count(result.stderr, 'asked the helper which sandbox layers')).toBe(1)
    }
  })

  it('works out the sandbox that reads the files once, while the command runs', async () => {
    world = new World('cost-exec-reader-ahead')
    world.file('a.txt', 'a\n')
    // The command reads the .npmrc as a copy; the reader hides it: searching its place, once, is the reader's policy.
    world.write(join(world.home, '.npmrc'), 'registry=https://registry.example.com/\n')
    const run = await world.hmm(['run', 'true'])
    expect(run.exitCode, run.stderr).toBe(0)
    const exec = await world.hmm(['exec', workspaceLine(run.stderr).id, 'sh', '-c', 'sleep 0.5; echo b > b.txt'], {env: {...world.env, HMM_DEBUG: '1'}})
    expect(exec.exitCode, exec.stderr).toBe(0)
    const steps = exec.stderr.split('\n').flatMap(line => /^hmm: debug: (searched 1 secrets' places|command starting|command ended)/.exec(line)?.[1] ?? [])
    expect(steps).toEqual(['command starting', "searched 1 secrets' places", 'command ended'])
  })

  it('keeps no copy of the files written in the second the workspace was made: git does not hash them again', async () => {
    world = new World('cost-run-plain-racy')
    // The files and the workspace's index in one second (from its start, so they do); under load they may
    // not: again, until they do.
    let blobs: string[] | undefined
    for (let attempt = 0; attempt < 5 && !blobs; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
      for (let n = 0; n < 20; n++) world.file(`f${n}`, `file ${n} ${attempt}\n`)
      const written = Math.floor(lstatSync(join(world.origin, 'f19')).mtimeMs / 1000)
      const result = await world.hmm(['run', 'true'])
      expect(result.exitCode, result.stderr).toBe(0)
      const id = /^hmm: workspace ([0-9a-z]{6}):/m.exec(result.stderr)![1]
      // The clone's directory is made just before its index is hashed.
      if (Math.floor(lstatSync(join(world.dataDir, id, 'tree')).ctimeMs / 1000) !== written) continue
      const gitDir = join(world.dataDir, id, 'git')
      const objects = await world.sh(`git --git-dir='${gitDir}' cat-file --batch-all-objects --batch-check='%(objecttype)'`)
      blobs = objects.split('\n').filter(type => type === 'blob')
    }
    if (!blobs) throw new Error('the files and the workspace never fell in one second in 5 tries')
    expect(blobs).toEqual([])
  })
})

/** The checks of the entries cloned in the marked second (git/first-index.ts) HMM_DEBUG names, by how many each checked. */
const checks = (stderr: string) =>
  [...stderr.matchAll(/^hmm: debug: checked (\d+) entries cloned in the second/gm)].map(([, n]) => Number(n)).filter(n => n > 0)

describe('the first diff of a repository', () => {
  it('reads only the file the command changed, though the files, the index and the workspace fell in one second', async () => {
    world = new World('cost-diff-racy')
    await world.git(['init', '-q'])
    // git in the reader cannot freshen the origin's objects: each file it hashes again leaves a blob in hmm's private
    // repository, so the blobs there count what the command's end and the diff read (the changed file: 1).
    let blobs: string[] | undefined
    let debugged = ''
    for (let attempt = 0; attempt < 5 && !blobs; attempt++) {
      // The files, the origin's index, the clone and the command's end in one second (from its start, so they do);
      // under load they may not: again, until they do.
      await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
      for (let n = 0; n < 40; n++) world.file(`f${n}`, `file ${n} ${attempt}\n`)
      await world.sh('git add -A && git commit -qm files')
      const written = Math.floor(lstatSync(join(world.origin, 'f39')).mtimeMs / 1000)
      const run = await world.hmm(['run', 'sh', '-c', 'echo more >> f0'])
      expect(run.exitCode, run.stderr).toBe(0)
      const {id} = workspaceLine(run.stderr)
      if (Math.floor(lstatSync(join(world.dataDir, id, 'tree')).ctimeMs / 1000) !== written) {
        await world.hmm(['rm', '--force', id])
        continue
      }
      const diff = await world.hmm(['diff', '--stat', id], {env: {...world.env, HMM_DEBUG: '1'}})
      expect(diff.stdout).toMatch(/^ f0 \| 1 \+$/m)
      debugged = diff.stderr.replace(/^hmm: debug: confined:.*\n/gm, '')
      const objects = join(world.dataDir, id, 'git', 'objects')
      const loose = await world.sh(`cd '${objects}' && find . -path './??/*' -type f | sed 's|^./||;s|/||'`)
      const gitDir = join(world.dataDir, id, 'git')
      blobs = []
      for (const object of loose.split('\n').filter(Boolean)) {
        if ((await world.git(['--git-dir', gitDir, 'cat-file', '-t', object])) === 'blob') blobs.push(object)
      }
    }
    if (!blobs) throw new Error('the files and the workspace never fell in one second in 5 tries')
    expect(blobs.length, debugged).toBe(1)
  })

  it("does not check again the files cloned last, which the run's end checked and nothing of the workspace could write since", async () => {
    world = new World('cost-diff-checked')
    await world.gitRepo()
    let diff: string | undefined
    for (let attempt = 0; attempt < 5 && diff === undefined; attempt++) {
      // The clone, the command and its end in one second (from its start, so they do), so the entries cloned in it
      // are still to check when the run's end has checked them; under load they may not be: again, until they are.
      await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000)))
      const run = await world.hmm(['run', 'sh', '-c', 'echo more >> README.md'], {env: {...world.env, HMM_DEBUG: '1'}})
      expect(run.exitCode, run.stderr).toBe(0)
      const {id} = workspaceLine(run.stderr)
      if (checks(run.stderr).length === 0 || !existsSync(join(world.dataDir, id, 'git', 'index.check-from'))) {
        await world.hmm(['rm', '--force', id])
        continue
      }
      diff = (await world.hmm(['diff', '--stat', id], {env: {...world.env, HMM_DEBUG: '1'}})).stderr
    }
    if (diff === undefined) throw new Error("the clone and the run's end never fell in one second in 5 tries")
    expect(checks(diff), diff).toEqual([])
  })
})

describe('hmm diff', () => {
  /** `hmm diff --stat` with HMM_DEBUG after a run that changed README.md: what it said on stderr. */
  async function diffAfterRun(name: string): Promise<string> {
    world = new World(name)
    await world.gitRepo()
    const run = await world.hmm(['run', 'sh', '-c', 'echo more >> README.md'])
    expect(run.exitCode, run.stderr).toBe(0)
    const diff = await world.hmm(['diff', '--stat'], {env: {...world.env, HMM_DEBUG: '1'}})
    expect(diff.stdout).toMatch(/^ README.md \| 1 \+$/m)
    return diff.stderr
  }

  it("makes one sandbox policy, its reader's: the programs it runs are checked against where a command could write", async () => {
    expect(count(await diffAfterRun('cost-diff-policies'), 'made the sandbox policy of ')).toBe(1)
  })

  it('looks for new files once, while another git lists what changed; the one that reads them reads only those', async () => {
    const stderr = await diffAfterRun('cost-diff-scans')
    // Each git of the confined script, by its subcommand: git add --all would look through the whole tree again
    // (diff-files only looks at the files the index holds), and so would a refresh after the update-index.
    const gits = [...stderr.matchAll(/"\$git" ([a-z-]+)/g)].map(([, subcommand]) => subcommand)
    expect(gits).toEqual(['ls-files', 'diff-files', 'update-index', 'write-tree'])
    // The two that list run at once: one in the background while the other runs.
    expect(stderr).toMatch(/"\$git" ls-files [^;&|]*& "\$git" diff-files /)
  })

  it.skipIf(READERS_SLOWER !== undefined)(`sets up the sandbox that reads the files while it takes the index in hand, not after${slower}`, async () => {
    const sandboxes = (await diffAfterRun('cost-diff-ahead')).split('\n').filter(line => line.startsWith('hmm: debug: confined:'))
    expect(sandboxes.map(line => line.endsWith(' (set up ahead)'))).toEqual([true])
  })

  it('compares the tree it records with the one the workspace was made from twice: for the paths changed, and for the stat', async () => {
    const stderr = await diffAfterRun('cost-diff-trees')
    expect({index: count(stderr, 'git diff-index:'), trees: count(stderr, 'git diff-tree:')}).toEqual({index: 0, trees: 2})
  })

  it.skipIf(READERS_SLOWER !== undefined)(`has that tree written by the git that read the files, in their sandbox: no git of its own${slower}`, async () => {
    expect(count(await diffAfterRun('cost-diff-write-tree'), 'git write-tree:')).toBe(0)
  })
})

describe('the commits of a workspace', () => {
  it("are bundled out of it once for a HEAD: hmm diff, log and merge after hmm run's count take them from hmm's private repository", async () => {
    world = new World('cost-bundle')
    await world.gitRepo()
    const debug = {env: {...world.env, HMM_DEBUG: '1'}}
    const bundles = (stderr: string) => stderr.split('\n').filter(line => line.startsWith('hmm: debug: confined:') && line.includes(' bundle create ')).length
    const run = await world.hmm(['run', 'sh', '-c', 'echo x > x.txt && git add x.txt && git commit -qm x'], debug)
    expect(run.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(1 commit\)$/m)
    expect(bundles(run.stderr)).toBe(1)
    const counts: Record<string, number> = {}
    for (const command of ['diff', 'log', 'merge']) {
      const result = await world.hmm([command], debug)
      expect(result.exitCode).toBe(0)
      counts[command] = bundles(result.stderr)
    }
    expect(counts).toEqual({diff: 0, log: 0, merge: 0})
    expect(await world.git(['log', '-1', '--format=%s'])).toBe('x')
    // A HEAD not taken yet is bundled, once.
    const exec = await world.hmm(['exec', workspaceLine(run.stderr).id, 'sh', '-c', 'echo y > y.txt && git add y.txt && git commit -qm y'], debug)
    expect(exec.stderr).toMatch(/^hmm: workspace [0-9a-z]{6}: .* \(1 commit\)$/m)
    expect(bundles(exec.stderr)).toBe(1)
    const log = await world.hmm(['log'], debug)
    expect(log.stdout).toMatch(/^[0-9a-f]{7,} y\n$/)
    expect(bundles(log.stderr)).toBe(0)
  })
})
