// Modes, owners, times and extended attributes (attacker's review 5, F8):
// Landlock has no right for chmod, chown, utimensat or setxattr, so with the
// namespaces every mount is read-only in the command's mount namespace but
// the places it may write, and the seccomp filter refuses set-user-ID and
// set-group-ID bits in every mode. Run as root and as a plain user: as root
// the command's capabilities would reach every file of the system.
import {chmodSync, chownSync, copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** Mode, owner, and whether touch -d 2001-01-01 re-dated it (hmm itself writes the home meanwhile). */
function attributes(path: string): string {
  const stat = lstatSync(path)
  return `${(stat.mode & 0o7777).toString(8)} ${stat.uid}:${stat.gid} ${stat.mtime.getFullYear() === 2001 ? 're-dated' : ''}`
}

/** Each change tried on `path` in the sandbox, printed where it worked. */
function tryChanges(path: string): string {
  return [
    `chmod 4755 '${path}' 2>/dev/null && echo 'setuid ${path}'`,
    `chmod 0666 '${path}' 2>/dev/null && echo 'chmod ${path}'`,
    `chown "$(id -u):$(id -g)" '${path}' 2>/dev/null && echo 'chown ${path}'`,
    `touch -d 2001-01-01 '${path}' 2>/dev/null && echo 'touch ${path}'`,
    `python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.hmm", b"x")' '${path}' 2>/dev/null && echo 'setxattr ${path}'`,
  ].join('; ')
}

describe('the sandboxed command, isolated', () => {
  it("changes no mode, owner, time or extended attribute outside the places it may write: a program, the user's ~/.bashrc, the home, the origin", async () => {
    world = new World('attributes-outside')
    const program = join(world.root, 'victims', 'python3')
    mkdirSync(join(program, '..'))
    copyFileSync('/bin/sh', program)
    chmodSync(program, 0o755)
    const rc = world.write(join(world.home, '.bashrc'), '# my rc\n')
    const readme = world.file('README', 'hi\n')
    const outside = [program, rc, world.home, readme]
    const before = outside.map(attributes)
    const result = await world.hmm(['run', '--rm', 'sh', '-c', `${outside.map(tryChanges).join('; ')}; true`])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('')
    expect(outside.map(attributes)).toEqual(before)
  })

  it("changes no mode, time or attribute of hmm's bookkeeping of its workspace though a -w place holds the data directory (-w ~/.local)", async () => {
    world = new World('attributes-data-held')
    world.file('f.txt', 'x\n')
    const made = await world.hmm(['run', '-n', 'w', 'true'])
    expect(made.exitCode, made.stderr).toBe(0)
    const [id] = readdirSync(world.dataDir).filter(name => name !== 'registry' && !name.startsWith('registry'))
    const own = ['git', 'git/objects', 'lock'].map(rel => join(world.dataDir, id, rel))
    const before = own.map(attributes)
    const script = `${own.map(tryChanges).join('; ')}; touch f.txt && chmod 0600 f.txt && echo tree`
    const result = await world.hmm(['exec', '-w', join(world.home, '.local'), 'w', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('tree\n')
    expect(own.map(attributes)).toEqual(before)
    expect((await world.hmm(['diff', '--stat', 'w'])).exitCode).toBe(0)
  })

  it('changes modes, times and attributes where it may write: the tree (and commits there), its /tmp and $TMPDIR, the caches, a -w path', async () => {
    world = new World('attributes-inside')
    world.file('f.txt', 'x\n')
    const granted = join(world.root, 'granted')
    mkdirSync(granted)
    world.write(join(granted, 'g'), 'g\n')
    mkdirSync(join(world.home, '.cache'))
    const tmpdir = join(world.root, 'usertmp')
    mkdirSync(tmpdir)
    const places = ['f.txt', '/tmp/t', '"$TMPDIR/d"', '"$HOME/.cache/c"', `'${granted}/g'`]
    const script = [
      'git init -q && git add f.txt && git commit -qm one && echo committed',
      ...places.map(
        place =>
          `echo x > ${place} && chmod 0700 ${place} && touch -d 2001-01-01 ${place} && python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.hmm", b"x")' ${place} && stat -c %a ${place}`,
      ),
    ].join(' && ')
    const result = await world.hmm(['run', '--rm', '-w', granted, 'sh', '-c', script], {env: {...world.env, TMPDIR: tmpdir}})
    expect(result.stdout, result.stderr).toBe(`committed\n${'700\n'.repeat(places.length)}`)
    expect(statSync(join(granted, 'g')).mode & 0o777).toBe(0o700)
    expect(readFileSync(join(granted, 'g'), 'utf8')).toBe('x\n')
  })
})

describe('opted out of the namespaces (isolation = "landlock-only")', () => {
  it.skipIf(process.getuid?.() !== 0)("run as root, gives away no file outside, nor changes another user's (no CHOWN, no FOWNER there)", async () => {
    world = new World('attributes-root-landlock-only')
    world.write(join(world.home, '.config', 'hmm', 'config.toml'), 'isolation = "landlock-only"\n')
    const rootOwned = world.write(join(world.root, 'victims', 'passwd'), 'root:x:0:0\n')
    const others = world.write(join(world.root, 'victims', 'alice'), "alice's\n")
    chownSync(others, 65534, 65534)
    const before = [rootOwned, others].map(attributes)
    const script = [
      `chown 65534 '${rootOwned}' 2>/dev/null && echo gave-away`,
      `chmod 0666 '${others}' 2>/dev/null && echo chmod-others`,
      `chown 0 '${others}' 2>/dev/null && echo took`,
      'touch mine && chmod 0600 mine && stat -c %a mine',
    ].join('; ')
    const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
    expect(result.stdout, result.stderr).toBe('600\n')
    expect([rootOwned, others].map(attributes)).toEqual(before)
  })
})

describe('in every mode, the sandboxed command', () => {
  for (const isolation of ['full', 'landlock-only']) {
    it(`sets no set-user-ID or set-group-ID bit, even on its own files (isolation = "${isolation}")`, async () => {
      world = new World(`setid-${isolation}`)
      world.write(join(world.home, '.config', 'hmm', 'config.toml'), `isolation = "${isolation}"\n`)
      world.file('prog', '#!/bin/sh\n')
      const script = [
        'chmod 4755 prog 2>/dev/null && echo setuid',
        'chmod g+s prog 2>/dev/null && echo setgid',
        `python3 -c 'import os; os.chmod("prog", 0o6755)' 2>/dev/null && echo chmod-setid`,
        `python3 -c 'import os; fd = os.open("prog", os.O_RDONLY); os.fchmod(fd, 0o4755)' 2>/dev/null && echo fchmod-setuid`,
        'mkdir d && chmod 2775 d 2>/dev/null && echo setgid-dir',
        'chmod 0700 prog && stat -c %a prog',
      ].join('; ')
      const result = await world.hmm(['run', '--rm', 'sh', '-c', script])
      expect(result.stdout, result.stderr).toBe('700\n')
    })
  }
})
