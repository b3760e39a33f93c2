// Project secrets stay home (SPEC "Sandbox" › Reading, project secrets): the
// config file's `exclude` names files of the origin that are not cloned into
// the workspace at all; hmm run says once what it left out, and diff, apply
// and merge never show, write or overwrite them.
import {existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'
import {hmm, made, said, snapshot, taking} from './taking.js'

let world: World
afterEach(() => world?.dispose())

const config = (text: string) => world.write(join(world.home, '.config', 'hmm', 'config.toml'), text)

/** A repository with secrets of every kind: ignored, untracked, and one committed by mistake; and the examples, which are not secrets. */
async function originWithEnv(name: string): Promise<void> {
  world = new World(name)
  await world.git(['init', '-q'])
  world.file('README.md', 'hello\n')
  world.file('.gitignore', '.env\n.env.local\n')
  world.file('.env.example', 'API_KEY=\n')
  world.file('config/.env.staging', 'STAGING_KEY=committed-by-mistake\n')
  await world.git(['add', '-A'])
  await world.git(['commit', '-qm', 'first'])
  world.file('.env', 'API_KEY=live\n')
  world.file('.env.local', 'LOCAL_KEY=live\n')
}

/** What the command saw of the secrets. */
const LOOK = 'for f in .env .env.local config/.env.staging .env.example; do if [ -e $f ]; then echo "$f: $(cat $f)"; else echo "$f: absent"; fi; done'

describe('project secrets (exclude) are not cloned into the workspace', () => {
  it("hides the origin, not where links in it lead: a .venv linking the system's programs leaves them runnable", async () => {
    world = new World('origin-links-out')
    const origin = join(world.root, 'srv', 'app')
    world.write(join(origin, 'README.md'), 'hello\n')
    mkdirSync(join(origin, '.venv', 'bin'), {recursive: true})
    symlinkSync(realpathSync('/bin/sh'), join(origin, '.venv', 'bin', 'sh'))
    const result = await world.hmm(['run', '--rm', 'sh', '-c', 'cat README.md'], {cwd: origin})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('hello\n')
  })

  it('are not read from the origin either, wherever it lies: the command sees no file of the origin but through its clone', async () => {
    world = new World('exclude-origin-outside-home')
    const origin = join(world.root, 'srv', 'app')
    world.write(join(origin, '.env'), 'API_KEY=live\n')
    world.write(join(origin, 'README.md'), 'hello\n')
    const look = `cat README.md; cat '${origin}/.env' 2>/dev/null || echo origin-env-unreadable; cat '${origin}/README.md' 2>/dev/null || echo origin-unreadable`
    const result = await world.hmm(['run', '--rm', 'sh', '-c', look], {cwd: origin})
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe('hello\norigin-env-unreadable\norigin-unreadable\n')
  })

  it('leaves .env and .env.* out by default, keeps .env.example, says so once, and hmm diff shows nothing of them', async () => {
    await originWithEnv('exclude-default')
    const result = await world.hmm(['run', 'sh', '-c', LOOK])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe(['.env: absent', '.env.local: absent', 'config/.env.staging: absent', '.env.example: API_KEY=', ''].join('\n'))
    const left = said(result.stderr).filter(line => line.includes('left out'))
    expect(left).toEqual(['hmm: left out of the workspace: .env, .env.local, config/.env.staging (exclude in the config file)'])
    // The committed one is not shown as deleted: the tree recorded of the origin leaves it out too.
    expect(await hmm(world, ['diff'])).toMatchObject({exitCode: 0, stdout: ''})
    expect((await hmm(world, ['ls'])).stdout).toMatch(/ - +~\/src\/proj\n$/)
  })

  it('leaves out what a non-git origin holds too', async () => {
    world = new World('exclude-plain')
    world.file('main.py', 'print(1)\n')
    world.file('.env', 'API_KEY=live\n')
    world.file('sub/.env.production', 'PROD=live\n')
    const result = await world.hmm(['run', 'sh', '-c', 'ls -A . sub'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).not.toContain('.env')
    expect(said(result.stderr)).toContain('hmm: left out of the workspace: .env, sub/.env.production (exclude in the config file)')
    expect(await hmm(world, ['diff'])).toMatchObject({exitCode: 0, stdout: ''})
  })

  it('never shows, applies or overwrites a .env the command writes, even when it un-ignores it in .gitignore', async () => {
    await originWithEnv('exclude-apply')
    const ws = await made(
      world,
      "echo API_KEY=attacker > .env && echo 'STAGING_KEY=x' > config/.env.staging && printf '!.env\\n' > .gitignore && echo more >> README.md",
    )
    const diff = await hmm(world, ['diff', ws.id])
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('README.md')
    expect(diff.stdout).toContain('.gitignore')
    expect(diff.stdout.match(/^diff --git .*/gm)).toEqual(['diff --git a/.gitignore b/.gitignore', 'diff --git a/README.md b/README.md'])
    expect((await hmm(world, ['diff', '--stat', ws.id])).stdout).not.toMatch(/\.env/)
    expect(await hmm(world, ['apply', ws.id])).toMatchObject({exitCode: 0})
    expect(readFileSync(join(world.origin, '.env'), 'utf8')).toBe('API_KEY=live\n')
    expect(readFileSync(join(world.origin, 'config/.env.staging'), 'utf8')).toBe('STAGING_KEY=committed-by-mistake\n')
    expect(readFileSync(join(world.origin, 'README.md'), 'utf8')).toBe('hello\nmore\n')
    // All of what hmm takes was taken: the workspace counts as applied.
    expect((await hmm(world, ['rm', ws.id])).exitCode).toBe(0)
  })

  it('refuses to merge commits that add an excluded file, naming it, with the origin untouched', async () => {
    await originWithEnv('exclude-merge')
    const ws = await made(world, 'echo API_KEY=attacker > .env.production && echo ok > ok.txt && git add -f .env.production ok.txt && git commit -qm env')
    const before = snapshot(world.origin)
    const result = await taking(world, ['merge', ws.id])
    expect(result.exitCode).toBe(1)
    expect(said(result.stderr)).toEqual([
      `hmm: workspace ${ws.label}'s commits change files that exclude in the config file keeps out of workspaces:`,
      'hmm:   .env.production: excluded',
      `hmm: take them out of the commits (hmm exec ${ws.id} git rm --cached -- PATH, then commit), then hmm merge ${ws.id} again`,
    ])
    expect(snapshot(world.origin)).toEqual(before)
    expect(existsSync(join(world.origin, '.env.production'))).toBe(false)
    expect((await taking(world, ['merge', '--force', ws.id])).exitCode).toBe(1)
  })

  it("follows the config file's exclude: gitignore patterns, the agent's table added to the top level's", async () => {
    world = new World('exclude-config')
    config('exclude = ["secrets/", "*.pem", "!public.pem"]\n\n[agent.sh]\nexclude = ["notes/**/private.txt"]\n')
    world.file('.env', 'API_KEY=kept-by-the-user-s-choice\n')
    world.file('secrets/db.txt', 'db\n')
    world.file('tls/key.pem', 'key\n')
    world.file('tls/public.pem', 'public\n')
    world.file('notes/a/b/private.txt', 'private\n')
    world.file('notes/public.txt', 'public\n')
    const result = await world.hmm(['run', 'sh', '-c', 'find . -type f | sort'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe(['./.env', './notes/public.txt', './tls/public.pem', ''].join('\n'))
    expect(said(result.stderr)).toContain('hmm: left out of the workspace: notes/a/b/private.txt, secrets/, tls/key.pem (exclude in the config file)')
    config('exclude = ["secrets/", 3]\n')
    expect(said((await world.hmm(['run', 'true'])).stderr)).toEqual(['hmm: ~/.config/hmm/config.toml: exclude: expected a list of gitignore patterns'])
  })

  it('says nothing when nothing was left out', async () => {
    world = new World('exclude-nothing')
    world.file('main.py', 'print(1)\n')
    const result = await world.hmm(['run', 'true'])
    expect(result.stderr).not.toContain('left out')
  })

  it('points a hide of a file in the project to exclude', async () => {
    world = new World('hide-in-project')
    world.file('main.py', 'print(1)\n')
    world.file('.secret', 'live\n')
    config('hide = ["~/src/proj/.secret"]\n')
    const result = await world.hmm(['run', 'true'])
    expect(result.exitCode).toBe(1)
    expect(said(result.stderr)).toEqual([
      `hmm: ${world.origin} holds ${join(world.origin, '.secret')}, which hide in the config file hides, so it cannot be cloned: exclude = [".secret"] in the config file leaves it out of workspaces`,
    ])
  })
})
