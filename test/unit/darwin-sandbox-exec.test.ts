// The Seatbelt profile run for real: commands under /usr/bin/sandbox-exec,
// with exactly the argv src/platform/darwin.ts builds, try every way out.
// Only macOS has sandbox-exec: elsewhere each test is skipped, and says so.
//
// Worlds live under <repo>/.test-worlds, not in a temp directory: the command
// may write temp directories, so "cannot write X" needs X outside them. Each
// script prints `ran` first, so a profile sandbox-exec refused (the command
// never ran) cannot pass for a denial.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {onTestFinished, describe, expect, it} from 'vitest'
import {seatbelt, seatbeltArgv} from '../../src/platform/darwin.js'
import {buildPolicy, type SandboxPolicy} from '../../src/sandbox/policy.js'
import {PROJECT} from '../world.js'

const notDarwin = process.platform !== 'darwin'
const SECRET = 'BEGIN-SECRET-KEY-material'

interface World {
  root: string
  home: string
  data: string
  tree: string
  /** Another workspace's tree in the same data directory. */
  other: string
  outside: string
  policy: SandboxPolicy
  /** Runs `sh -c script sh args...` under the sandbox, in the tree. */
  sh(script: string, ...args: string[]): {status: number | null; stdout: string; stderr: string}
}

/** A fresh world: home with secrets, a data directory with two workspaces, a directory outside everything writable. */
function world(options: {name?: string; root?: string} = {}): World {
  const name = options.name ?? ''
  let root = options.root
  if (!root) {
    mkdirSync(join(PROJECT, '.test-worlds'), {recursive: true})
    root = mkdtempSync(join(realpathSync(join(PROJECT, '.test-worlds')), 'seatbelt-'))
  }
  const kept = root
  onTestFinished(context => {
    if (context.task.result?.state === 'pass') rmSync(kept, {recursive: true, force: true})
    else process.stderr.write(`kept the world of "${context.task.name}": ${kept}\n`)
  })
  const home = join(root, `home${name}`)
  const data = join(root, `data${name}`)
  const tree = join(data, 'k3xq9a', 'tree', `proj${name}`)
  const other = join(data, 'p7mw2d', 'tree', 'proj')
  const outside = join(root, 'outside')
  for (const dir of [join(home, '.ssh'), join(home, '.aws'), tree, other, outside]) mkdirSync(dir, {recursive: true})
  writeFileSync(join(home, '.ssh', `id_rsa${name}`), SECRET)
  writeFileSync(join(home, '.aws', 'credentials'), SECRET)
  writeFileSync(join(home, 'notes.txt'), 'notes\n')
  writeFileSync(join(other, 'secret.txt'), SECRET)
  writeFileSync(join(data, 'registry.sqlite'), SECRET)
  const policy = buildPolicy({tree, home, dataDir: data, extraWritable: [], tmpdir: process.env.TMPDIR, platform: 'darwin'})
  // The proofs below need "outside" to be outside everything writable (but
  // for a world put inside a writable place on purpose).
  for (const {name: parameter, value} of options.root ? [] : seatbelt(policy).parameters) {
    if (!parameter.startsWith('WRITABLE_')) continue
    expect(`${outside}/`.startsWith(`${value}/`), `${outside} lies in the writable ${value}: move the repository out of it`).toBe(false)
  }
  return {
    root,
    home,
    data,
    tree,
    other,
    outside,
    policy,
    sh(script, ...args) {
      const argv = seatbeltArgv(policy, ['/bin/sh', '-c', `echo ran; ${script}`, 'sh', ...args])
      const result = spawnSync(argv[0]!, argv.slice(1), {cwd: tree, encoding: 'utf8'})
      expect(result.stdout, `the command did not run under the profile: ${result.stderr}`).toMatch(/^ran\n/)
      return {status: result.status, stdout: result.stdout, stderr: result.stderr}
    },
  }
}

describe('under /usr/bin/sandbox-exec (macOS only: skipped elsewhere)', () => {
  it.skipIf(notDarwin)('writes the workspace tree [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('echo made > "$1/made.txt" && mkdir "$1/dir" && mv "$1/made.txt" "$1/dir/moved.txt" && echo WROTE', w.tree)
    expect(r.stdout).toContain('WROTE')
    expect(readFileSync(join(w.tree, 'dir', 'moved.txt'), 'utf8')).toBe('made\n')
  })

  it.skipIf(notDarwin)('cannot write outside the tree and the writable paths [needs macOS sandbox-exec]', () => {
    const w = world()
    writeFileSync(join(w.outside, 'control.txt'), 'hmm can write here itself\n')
    const r = w.sh('echo x > "$1/new.txt" || echo DENIED-NEW; echo x >> "$2" || echo DENIED-HOME', w.outside, join(w.home, 'notes.txt'))
    expect(r.stdout).toContain('DENIED-NEW')
    expect(r.stdout).toContain('DENIED-HOME')
    expect(existsSync(join(w.outside, 'new.txt'))).toBe(false)
    expect(readFileSync(join(w.home, 'notes.txt'), 'utf8')).toBe('notes\n')
  })

  it.skipIf(notDarwin)('writes /tmp, $TMPDIR and /dev/null [needs macOS sandbox-exec]', () => {
    const w = world()
    const tmp = mkdtempSync('/tmp/hmm-seatbelt-')
    onTestFinished(() => rmSync(tmp, {recursive: true, force: true}))
    const r = w.sh(
      'echo x > "$1/t" && echo x > "${TMPDIR:-/tmp}/hmm-seatbelt-$$" && rm "${TMPDIR:-/tmp}/hmm-seatbelt-$$" && echo x > /dev/null && echo WROTE',
      tmp,
    )
    expect(r.stdout).toContain('WROTE')
  })

  it.skipIf(notDarwin)('cannot read ~/.ssh/id_rsa [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('cat "$1" || echo DENIED; cat "$2" || echo DENIED', join(w.home, '.ssh', 'id_rsa'), join(w.home, '.aws', 'credentials'))
    expect(r.stdout).not.toContain(SECRET)
    expect(r.stdout.match(/DENIED/g)).toHaveLength(2)
  })

  it.skipIf(notDarwin)('cannot list ~/.ssh [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('ls -a "$1" || echo DENIED', join(w.home, '.ssh'))
    expect(r.stdout).not.toContain('id_rsa')
    expect(r.stdout).toContain('DENIED')
  })

  it.skipIf(notDarwin)('cannot read or list the data directory, another workspace or the registry [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh(
      'ls "$1" || echo DENIED; cat "$2" || echo DENIED; cat "$3" || echo DENIED; ls "$4" || echo DENIED',
      w.data,
      join(w.other, 'secret.txt'),
      join(w.data, 'registry.sqlite'),
      join(w.data, 'k3xq9a'),
    )
    expect(r.stdout).not.toContain(SECRET)
    expect(r.stdout).not.toContain('registry')
    expect(r.stdout.match(/DENIED/g)).toHaveLength(4)
  })

  it.skipIf(notDarwin)('finds its own tree by its real path (pwd -P walks the hidden directories above it) [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('/bin/pwd -P && cd "$1" && echo CD', w.tree)
    expect(r.stdout).toContain(`\n${realpathSync(w.tree)}\n`)
    expect(r.stdout).toContain('CD')
  })

  it.skipIf(notDarwin)('cannot remove or rename the tree itself [needs macOS sandbox-exec]', () => {
    const w = world()
    const tmp = realpathSync(mkdtempSync('/tmp/hmm-seatbelt-'))
    onTestFinished(() => rmSync(tmp, {recursive: true, force: true}))
    const r = w.sh('mv "$1" "$2/moved" || echo DENIED; rmdir "$1" || echo DENIED', w.tree, tmp)
    expect(r.stdout.match(/DENIED/g)).toHaveLength(2)
    expect(existsSync(w.tree)).toBe(true)
  })

  it.skipIf(notDarwin)('hard-link bypass: cannot link a hidden file into the tree to read it [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('ln "$1" "$2" || echo DENIED; cat "$2" || echo GONE', join(w.home, '.ssh', 'id_rsa'), join(w.tree, 'key'))
    expect(r.stdout).toContain('DENIED')
    expect(r.stdout).not.toContain(SECRET)
  })

  it.skipIf(notDarwin)('hard-link bypass: cannot link a read-only file into /tmp to write it [needs macOS sandbox-exec]', () => {
    const w = world()
    const tmp = realpathSync(mkdtempSync('/tmp/hmm-seatbelt-'))
    onTestFinished(() => rmSync(tmp, {recursive: true, force: true}))
    const r = w.sh('ln "$1" "$2" || echo DENIED; echo evil >> "$2"', join(w.home, 'notes.txt'), join(tmp, 'notes'))
    expect(r.stdout).toContain('DENIED')
    expect(readFileSync(join(w.home, 'notes.txt'), 'utf8')).toBe('notes\n')
  })

  it.skipIf(notDarwin)("makes hard links within the tree and within a writable path, as npm's cache does [needs macOS sandbox-exec]", () => {
    const w = world()
    const tmp = realpathSync(mkdtempSync('/tmp/hmm-seatbelt-'))
    onTestFinished(() => rmSync(tmp, {recursive: true, force: true}))
    const r = w.sh('echo x > "$1/a" && ln "$1/a" "$1/b" && echo LINKED; echo x > "$2/a" && ln "$2/a" "$2/b" && mv "$2/b" "$2/c" && echo LINKED', w.tree, tmp)
    expect(r.stdout.match(/LINKED/g)).toHaveLength(2)
  })

  it.skipIf(notDarwin)('clone bypass: cannot clone a hidden file (cp -c) [needs macOS sandbox-exec]', () => {
    const w = world()
    // cp -c clones with clonefile(2): it works on a readable file, so the denial is the sandbox's.
    const r = w.sh(
      'cp -c "$3" "$1/notes" && echo CLONED; cp -c "$2" "$1/key" || echo DENIED; cat "$1/key" || echo GONE',
      w.tree,
      join(w.home, '.ssh', 'id_rsa'),
      join(w.home, 'notes.txt'),
    )
    expect(r.stdout).toContain('CLONED')
    expect(r.stdout).toContain('DENIED')
    expect(r.stdout).not.toContain(SECRET)
  })

  it.skipIf(notDarwin)('rename bypass: cannot move a directory above a hidden data directory to read it [needs macOS sandbox-exec]', () => {
    // The data directory under /tmp, which the command may write: renaming its
    // parent would give its files a path no rule names.
    const base = realpathSync(mkdtempSync('/tmp/hmm-seatbelt-'))
    onTestFinished(context => {
      if (context.task.result?.state === 'pass') rmSync(base, {recursive: true, force: true})
    })
    const w = world({root: join(base, 'above')})
    const r = w.sh('mv "$1" "$2" || echo DENIED; cat "$2/data/p7mw2d/tree/proj/secret.txt" || echo GONE', join(base, 'above'), join(base, 'moved'))
    expect(r.stdout).toContain('DENIED')
    expect(r.stdout).not.toContain(SECRET)
    expect(existsSync(join(base, 'above', 'data'))).toBe(true)
  })

  it.skipIf(notDarwin)('cannot set a set-user-ID bit, nor run a set-user-ID program [needs macOS sandbox-exec]', () => {
    const w = world()
    const r = w.sh('echo x > "$1/prog" && chmod 755 "$1/prog" && echo MODE; chmod u+s "$1/prog" || echo DENIED', w.tree)
    expect(r.stdout).toContain('MODE')
    expect(r.stdout).toContain('DENIED')
    expect(statSync(join(w.tree, 'prog')).mode & 0o6000).toBe(0)
    // Set-user-ID programs that succeed when run plainly: refused inside.
    const programs = [
      ['/usr/bin/sudo', '-V'],
      ['/bin/ps', '-p', String(process.pid)],
    ].filter(([path]) => existsSync(path!) && statSync(path!).mode & 0o4000)
    expect(programs.length, 'no set-user-ID program found to try').toBeGreaterThan(0)
    for (const program of programs) {
      expect(spawnSync(program[0]!, program.slice(1)).status, `${program[0]} outside the sandbox`).toBe(0)
      const inside = w.sh('"$@" >/dev/null 2>&1 && echo RAN || echo REFUSED', ...program)
      expect(inside.stdout, program[0]).toContain('REFUSED')
    }
  })

  it.skipIf(notDarwin)('works for paths holding quotes, backslashes, parentheses, ;, = and a newline [needs macOS sandbox-exec]', () => {
    const odd = 'we"i\\rd (pa)th; a=b x\ny ü'
    const w = world({name: odd})
    const r = w.sh('echo made > "$1/made.txt" && echo WROTE; cat "$2" || echo DENIED', w.tree, join(w.home, '.ssh', `id_rsa${odd}`))
    expect(r.stdout).toContain('WROTE')
    expect(r.stdout).toContain('DENIED')
    expect(r.stdout).not.toContain(SECRET)
    expect(readFileSync(join(w.tree, 'made.txt'), 'utf8')).toBe('made\n')
  })
})
