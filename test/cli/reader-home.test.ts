// hmm's own git that reads a workspace (reading its tree for hmm diff,
// `git bundle create` for hmm log and merge) reads only what the command
// may: the home composed as the command's (sandbox/home.ts), with the
// namespaces and under isolation = "landlock-only" (attacker's review 13,
// F2). The command controls the repository it reads, and so what git
// opens: an alternates entry naming another repository's objects makes
// `git bundle create` copy them into the bundle hmm shows.
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** A repository of the home the command cannot read, with one file holding REPOSECRET; its objects' names (hashes). */
async function otherRepository(): Promise<{objects: string; hashes: string[]}> {
  const other = join(world.home, 'other-repo')
  world.write(join(other, 'secret.txt'), 'REPOSECRET\n')
  await world.git(['init', '-q'], other)
  await world.git(['add', '-A'], other)
  await world.git(['commit', '-qm', 'other'], other)
  const hashes = (await world.git(['rev-list', '--objects', '--all'], other)).split('\n').map(line => line.split(' ')[0])
  return {objects: join(other, '.git', 'objects'), hashes}
}

/**
 * The command's steps: it cannot read the other repository's objects (under
 * landlock-only it may list their names: Landlock leaves READ_DIR; with the
 * namespaces they are not there, and the names are given here), borrows
 * them through its repository's alternates, and commits a tree naming each
 * as a blob.
 */
function borrowing(objects: string, hashes: string[]): string {
  const entries = hashes.map(hash => `100644 blob ${hash}\\t${hash}\\n`).join('')
  return [
    'set -e',
    `cat '${objects}'/*/* >/dev/null 2>&1 && echo read || echo unreadable`,
    `echo '${objects}' >> .git/objects/info/alternates`,
    `tree=$(printf '${entries}' | git mktree --missing)`,
    'git update-ref HEAD $(git commit-tree $tree -p HEAD -m fixtures)',
    'echo committed',
  ].join('\n')
}

describe("hmm's own git reading a workspace", () => {
  for (const isolation of ['namespaces', 'landlock-only']) {
    it(`reads no object of another repository of the home the workspace's repository borrows (${isolation})`, async () => {
      world = new World(`reader-home-${isolation}`)
      await world.gitRepo()
      if (isolation === 'landlock-only') world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
      const {objects, hashes} = await otherRepository()
      const run = await world.hmm(['run', '-n', 'a', 'sh', '-c', borrowing(objects, hashes)])
      expect(run.exitCode, run.stderr).toBe(0)
      expect(run.stdout).toBe('unreadable\ncommitted\n')
      const log = await world.hmm(['log', '-p', 'a'])
      expect(`${log.stdout}${log.stderr}`).not.toContain('REPOSECRET')
      // The bundling git found the objects missing: hmm says it could not take the commits.
      expect(log.exitCode).toBe(1)
    })
  }
})
