// Help and habits (SPEC "Help"): help everywhere, the version, did-you-mean,
// flag errors in one line, `hmm -a`/`--json`, the bare-hmm hint on a
// terminal, and shell completion that knows the workspaces.
import {execa} from 'execa'
import {chmodSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, World, workspaceLine} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** Runs hmm under a pseudo-terminal (script), returning what the terminal showed. */
async function onTerminal(args: string, cwd = world.origin, env: Record<string, string> = world.env): Promise<string> {
  const result = await execa('script', ['-qfec', `'${process.execPath}' '${BIN}' ${args}`, '/dev/null'], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
  })
  return String(result.stdout).replaceAll('\r\n', '\n')
}

describe('help', () => {
  it('is printed by hmm help, --help and -h, for hmm and for each command', async () => {
    world = new World('help')
    const top = await world.hmm(['help'])
    expect(top.exitCode).toBe(0)
    for (const command of ['exec', 'path', 'prune', 'completion', 'version', 'help', 'ls', 'run']) expect(top.stdout).toContain(command)
    expect((await world.hmm(['--help'])).stdout).toBe(top.stdout)
    expect((await world.hmm(['-h'])).stdout).toBe(top.stdout)
    const exec = await world.hmm(['help', 'exec'])
    expect(exec.exitCode).toBe(0)
    expect(exec.stdout).toContain('$ hmm exec [-d] [-w PATH]...')
    expect(exec.stdout).toContain('$ hmm exec parser claude --continue')
    for (const command of ['exec', 'path', 'prune', 'rm', 'ls', 'completion']) {
      const short = await world.hmm([command, '-h'])
      expect(short.exitCode, command).toBe(0)
      expect(short.stdout, command).toBe((await world.hmm(['help', command])).stdout)
    }
    // What follows run's (and exec's) command is the command's, -h included.
    expect((await world.hmm(['run', '--rm', 'echo', '-h'])).stdout).toBe('-h\n')
  })

  it('prints the version for hmm version and hmm --version', async () => {
    world = new World('version')
    const version = await world.hmm(['version'])
    expect(version.stdout).toMatch(/^hmm\/\d+\.\d+\.\d+ /)
    expect(version.exitCode).toBe(0)
    expect((await world.hmm(['--version'])).stdout).toBe(version.stdout)
    // What follows --version does not matter, as with git; -V is --version, as in most CLIs.
    for (const args of [['--version', 'x'], ['-V'], ['-V', 'ls', '--jsn'], ['-a', '--version']]) {
      expect(await world.hmm(args), args.join(' ')).toEqual({exitCode: 0, stdout: version.stdout, stderr: ''})
    }
    // Not in ls's place: ls has no --version.
    expect((await world.hmm(['ls', '--version'])).stderr).toBe('hmm: unknown flag --version for hmm ls\n')
  })

  it('suggests the nearest command for a mistyped one, and says flag errors in one line', async () => {
    world = new World('mistyped')
    expect(await world.hmm(['lst'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: unknown command lst; did you mean ls?\n'})
    expect(await world.hmm(['help', 'exce'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: unknown command exce; did you mean exec?\n'})
    expect(await world.hmm(['-h', 'exce'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: unknown command exce; did you mean exec?\n'})
    expect((await world.hmm(['frobnicate'])).stderr).toBe('hmm: unknown command frobnicate (hmm help lists the commands)\n')
    expect(await world.hmm(['ls', '--jsn'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: unknown flag --jsn for hmm ls; did you mean --json?\n'})
    expect((await world.hmm(['--jsn'])).stderr).toBe('hmm: unknown flag --jsn for hmm ls; did you mean --json?\n')
    expect((await world.hmm(['diff', '--stats'])).stderr).toBe('hmm: unknown flag --stats for hmm diff; did you mean --stat?\n')
    expect((await world.hmm(['diff', '--frobnicate'])).stderr).toBe('hmm: unknown flag --frobnicate for hmm diff\n')
    expect((await world.hmm(['path', 'a', 'b'])).stderr).toBe('hmm: unexpected argument b for hmm path\n')
    expect((await world.hmm(['run', '-n'])).stderr).toBe('hmm: --name needs a value for hmm run\n')
  })

  it("gives run's and exec's help and flag errors wherever they stand before the command, making nothing", async () => {
    world = new World('run-usage')
    const run = await world.hmm(['help', 'run'])
    expect(run.stdout).toContain('$ hmm run [-d] [--rm]')
    // -h and --help anywhere in hmm's part, even where a flag's value would be (as oclif has it).
    for (const args of [
      ['run', '-h'],
      ['run', '--help'],
      ['run', '-n', 'x', '--help'],
      ['run', '--rm', '-h', 'true'],
      ['run', '-n', '--help'],
    ]) {
      expect(await world.hmm(args), args.join(' ')).toEqual(run)
    }
    const exec = await world.hmm(['help', 'exec'])
    expect(await world.hmm(['exec', '-d', '--help', 'ws', 'true'])).toEqual(exec)
    expect(await world.hmm(['run', '--nam', 'x', 'true'])).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: 'hmm: unknown flag --nam for hmm run; did you mean --name?\n',
    })
    expect(await world.hmm(['exec', '--net'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: --net needs a value for hmm exec\n'})
    expect(await world.hmm(['exec', '--frobnicate', 'ws'])).toEqual({exitCode: 1, stdout: '', stderr: 'hmm: unknown flag --frobnicate for hmm exec\n'})
    expect((await world.hmm(['ls', '-a', '--json'])).stdout).toBe('[]\n')
    // After the command (or --), help flags are the command's.
    expect((await world.hmm(['run', '--rm', '--', 'printf', '%s', '--help'])).stdout).toBe('--help')
  })

  it('names itself hmm in help and in its version, not after the npm package', async () => {
    world = new World('version-name')
    const version = (await world.hmm(['--version'])).stdout
    expect(version).toMatch(/^hmm\/\d+\.\d+\.\d+ /)
    expect((await world.hmm(['--help'])).stdout).toContain(`VERSION\n  ${version}`)
  })

  it('lists with hmm -a and hmm --json as hmm ls -a and hmm ls --json', async () => {
    world = new World('ls-flags')
    const elsewhere = join(world.home, 'elsewhere')
    mkdirSync(elsewhere)
    const ws = workspaceLine((await world.hmm(['run', 'true'], {cwd: elsewhere})).stderr)
    const all = await world.hmm(['-a'])
    expect(all.stdout).toContain(ws.id)
    const ages = (text: string) => text.replace(/ +\d+[smhd] /g, ' AGE ')
    expect(ages(all.stdout)).toBe(ages((await world.hmm(['ls', '-a'])).stdout))
    expect(await world.hmm(['--json'])).toEqual(await world.hmm(['ls', '--json']))
    expect(JSON.parse((await world.hmm(['-a', '--json'])).stdout)).toHaveLength(1)
  })

  it('gives bare hmm with no workspaces a one-line hint, on a terminal only', async () => {
    world = new World('hint')
    expect(await world.hmm([])).toEqual({exitCode: 0, stdout: '', stderr: ''})
    expect((await onTerminal('')).trim()).toBe('hmm: no workspaces here yet: hmm run makes one (hmm help lists the commands)')
    expect((await onTerminal('ls')).trim()).toBe('')
    await world.hmm(['run', 'true'])
    expect(await onTerminal('')).toMatch(/^ID /)
    const other = join(world.home, 'other')
    mkdirSync(other)
    expect((await onTerminal('', other)).trim()).toBe('hmm: no workspaces in ~/other (1 elsewhere: hmm ls -a)')
  })
})

describe('completion', () => {
  /** A `hmm` on PATH that runs this checkout, as an installed hmm would. */
  function installHmm(): Record<string, string> {
    const bin = join(world.home, 'bin')
    mkdirSync(bin, {recursive: true})
    writeFileSync(join(bin, 'hmm'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`)
    chmodSync(join(bin, 'hmm'), 0o755)
    return {...world.env, PATH: `${bin}:${world.env.PATH}`}
  }

  /** What bash's completion offers for the words (the last is the one completed). */
  async function bashCompletes(env: Record<string, string>, words: string[]): Promise<string[]> {
    const quoted = words.map(word => `'${word}'`).join(' ')
    const script = `eval "$(hmm completion bash)"; COMP_WORDS=(hmm ${quoted}); COMP_CWORD=${words.length}; _hmm; printf '%s\\n' "\${COMPREPLY[@]}"`
    const result = await execa('bash', ['--norc', '--noprofile', '-c', script], {cwd: world.origin, env, extendEnv: false})
    return String(result.stdout).split('\n').filter(Boolean)
  }

  it('prints a script for bash, zsh and fish, and refuses other shells in one line', async () => {
    world = new World('completion-scripts')
    expect((await world.hmm(['completion', 'bash'])).stdout).toContain('complete -o default -F _hmm hmm')
    expect((await world.hmm(['completion', 'zsh'])).stdout).toContain('compdef _hmm hmm')
    expect((await world.hmm(['completion', 'fish'])).stdout).toContain("complete -c hmm -a '(__hmm_complete)'")
    const other = await world.hmm(['completion', 'powershell'])
    expect(other.exitCode).toBe(1)
    expect(other.stderr.split('\n').filter(Boolean)).toHaveLength(1)
  })

  it('completes commands, flags and workspace names and IDs in bash', async () => {
    world = new World('completion-bash')
    const env = installHmm()
    const ws = workspaceLine((await world.hmm(['run', '-n', 'parser', 'true'])).stderr)
    expect(await bashCompletes(env, ['l'])).toEqual(['log', 'ls'])
    expect(await bashCompletes(env, ['pr'])).toEqual(['pr', 'prune'])
    expect(await bashCompletes(env, ['ls', '--j'])).toEqual(['--json'])
    expect(await bashCompletes(env, ['rm', '-f', ''])).toEqual(['parser', ws.id])
    expect(await bashCompletes(env, ['exec', 'pa'])).toEqual(['parser'])
    expect(await bashCompletes(env, ['stop', 'pa'])).toEqual(['parser'])
    expect(await bashCompletes(env, ['exec', 'parser', 'x'])).toEqual([])
    expect(await bashCompletes(env, ['diff', ws.id.slice(0, 2)])).toEqual([ws.id])
    expect(await bashCompletes(env, ['help', 'ex'])).toEqual(['exec'])
    expect(await bashCompletes(env, ['completion', ''])).toEqual(['bash', 'fish', 'zsh'])
    // Background runs (hmm run -d).
    expect(await bashCompletes(env, ['at'])).toEqual(['attach'])
    expect(await bashCompletes(env, ['pe'])).toEqual(['peek'])
    expect(await bashCompletes(env, ['attach', 'pa'])).toEqual(['parser'])
    expect(await bashCompletes(env, ['peek', '-n', '3', 'pa'])).toEqual(['parser'])
    expect(await bashCompletes(env, ['run', '--det'])).toEqual(['--detach'])
    expect(await bashCompletes(env, ['exec', '--det'])).toEqual(['--detach'])
  })

  it('completes a workspace name at the press of Tab in an interactive bash (a real terminal)', async () => {
    world = new World('completion-tab')
    const env = installHmm()
    await world.hmm(['run', '-n', 'parser-one', 'true'])
    const rc = join(world.home, 'rc')
    writeFileSync(rc, 'PS1="$ "\neval "$(hmm completion bash)"\n')
    // Type `hmm path pa` and Tab: the terminal shows the line completed.
    const python = [
      'import os, pty, sys, time, select',
      `pid, fd = pty.fork()`,
      `if pid == 0: os.execvp('bash', ['bash', '--noprofile', '--rcfile', '${rc}', '-i'])`,
      'def read(until):',
      '    out = b""',
      '    end = time.time() + 30',
      '    while until not in out and time.time() < end:',
      '        if select.select([fd], [], [], 0.2)[0]: out += os.read(fd, 4096)',
      '    return out',
      'read(b"$ ")',
      'os.write(fd, b"hmm path pa\\t")',
      'sys.stdout.write(read(b"parser-one ").decode(errors="replace"))',
      'os.write(fd, b"\\x03exit\\n")',
    ].join('\n')
    const result = await execa('python3', ['-c', python], {cwd: world.origin, env, extendEnv: false})
    expect(String(result.stdout)).toContain('hmm path parser-one ')
  })
})
