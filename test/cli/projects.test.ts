// Real projects work unchanged inside (issue 24): a Node project, a Python
// project and git, run in the composed home as a user runs them outside,
// with real npm, Python and git, and no network (`--net none`): what they
// need is on the machine or in the project.
import {execa, execaSync} from 'execa'
import {cpSync, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {World} from '../world.js'

let world: World
afterEach(() => world?.dispose())

/** Every file, directory and link beneath a directory, with what it holds, to see that nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const seen: Record<string, string> = {}
  const walk = (rel: string) => {
    const path = join(dir, rel)
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) seen[rel] = `-> ${readlinkSync(path)}`
    else if (stat.isDirectory()) {
      seen[rel] = 'dir'
      for (const name of readdirSync(path)) walk(join(rel, name))
    } else seen[rel] = readFileSync(path, 'base64')
  }
  walk('.')
  return seen
}

/** A Node project whose dependency is a directory of its own (file:), with the lock npm wrote for it outside. */
async function nodeProject(): Promise<void> {
  world.file('greet/package.json', JSON.stringify({name: 'greet', version: '1.0.0', main: 'index.js', bin: {greet: 'cli.js'}}))
  world.file('greet/index.js', 'exports.hello = name => `hello, ${name}`\n')
  world.file('greet/cli.js', '#!/usr/bin/env node\nconsole.log(require("./index.js").hello(process.argv[2] || "world"))\n')
  world.file(
    'package.json',
    JSON.stringify({name: 'proj', version: '1.0.0', private: true, scripts: {test: 'node test.js'}, dependencies: {greet: 'file:greet'}}),
  )
  world.file(
    'test.js',
    'const assert = require("node:assert")\nassert.strictEqual(require("greet").hello("test"), "hello, test")\nconsole.log("tests passed")\n',
  )
  world.file('.gitignore', 'node_modules/\n')
  await world.sh('npm install --offline --no-audit --no-fund --loglevel=error && rm -rf node_modules')
  await world.git(['init', '-q'])
  await world.git(['add', '-A'])
  await world.git(['commit', '-qm', 'a node project'])
}

describe('a Node project', () => {
  it("installs from its lock, tests, runs a dependency's program and cleans npm's cache; the user's ~/.npm is unchanged", async () => {
    world = new World('projects-node')
    await nodeProject()
    // The user's cache holds a package and logs, as after any use of npm.
    const scratch = join(world.root, 'scratch')
    cpSync(join(world.origin, 'greet'), scratch, {recursive: true})
    await world.sh('npm pack --loglevel=error >/dev/null && npm cache add ./greet-1.0.0.tgz --loglevel=error', scratch)
    const npmDir = join(world.home, '.npm')
    expect(readdirSync(npmDir)).toEqual(expect.arrayContaining(['_cacache', '_logs']))
    const before = snapshot(npmDir)

    const script = [
      'set -e',
      'npm ci --loglevel=error',
      'ls node_modules/.bin',
      'npm test --loglevel=error',
      'npx greet inside',
      'npm cache clean --force --loglevel=error',
      'rm -rf ~/.npm/_logs',
      'ls -A ~/.npm',
      'echo done',
    ].join('\n')
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    // npm ci says what it added; then the links it made, the test, the program; the cache and logs are gone inside.
    expect(result.stdout).toMatch(/^added 1 package/m)
    // What npm keeps beside them (its update notifier's stamp, unless CI is set) is still there.
    const kept = readdirSync(npmDir)
      .filter(name => name !== '_cacache' && name !== '_logs')
      .sort()
    expect(result.stdout).toContain(
      `\ngreet\n\n> proj@1.0.0 test\n> node test.js\n\ntests passed\nhello, inside\n${kept.map(name => `${name}\n`).join('')}done\n`,
    )
    expect(snapshot(npmDir)).toEqual(before)
  })

  it("reads the settings of the user's ~/.npmrc as outside, and its token is in no file inside", async () => {
    world = new World('projects-npmrc')
    await nodeProject()
    const nodedir = join(world.root, 'node-headers')
    // The token is spelled whole only here and in ~/.npmrc: not in the command (which hmm may keep in a file).
    world.write(join(world.home, '.npmrc'), `nodedir=${nodedir}\n//registry.npmjs.org/:_authToken=npm_projSECRETtoken\n`)
    const outside = await world.sh('npm config get nodedir')
    expect(outside).toBe(nodedir)
    const script = [
      'npm config get nodedir',
      't=npm_proj',
      // Silent on what it may not read (hmm's own files of the workspace, masked): the command cannot read them either.
      'grep -rls -D skip "${t}SECRETtoken" "$HOME" /tmp',
      'echo "grep: $?"',
    ].join('\n')
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    // grep names no file (it exits 2 for what it may not read, 1 if it read all).
    const [got, ...rest] = result.stdout.split('\n')
    expect(got).toBe(outside)
    expect(rest.join('\n')).toMatch(/^grep: [12]\n$/)
  })
})

/** The apt Python (python3, python3-venv, python3-pytest), with what it needs to build a package offline. */
const PYTHON = '/usr/bin/python3'
const pythonMissing = (() => {
  if (!existsSync(PYTHON)) return `no ${PYTHON}`
  try {
    execaSync(PYTHON, ['-c', 'import ensurepip, venv, pytest, setuptools, wheel'])
    return undefined
  } catch (error) {
    return String((error as {stderr?: string}).stderr)
      .trim()
      .split('\n')
      .pop()
  }
})()

describe.skipIf(pythonMissing !== undefined)(`a Python project${pythonMissing ? ` (skipped: ${pythonMissing})` : ''}`, () => {
  it('makes a venv, installs a local package into it without an index, and its tests pass', async () => {
    world = new World('projects-python')
    world.file(
      'localpkg/pyproject.toml',
      '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "greet"\nversion = "1.0"\n',
    )
    world.file('localpkg/greet/__init__.py', 'def hello(name):\n    return f"hello, {name}"\n')
    world.file('tests/test_greet.py', 'from greet import hello\n\n\ndef test_hello():\n    assert hello("test") == "hello, test"\n')
    const script = [
      'set -e',
      `${PYTHON} -m venv --system-site-packages .venv`,
      '.venv/bin/pip install -q --no-index --no-build-isolation ./localpkg',
      '.venv/bin/python -m pytest -q -p no:cacheprovider tests',
    ].join('\n')
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', script])
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^1 passed in /m)
  })
})

/** Go from apt (golang-go). */
const goMissing = (() => {
  try {
    execaSync('go', ['version'])
    return undefined
  } catch {
    return 'no go on PATH'
  }
})()

/** A module proxy in a directory, as `GOPROXY=file://` reads it, serving example.com/quote v1.0.0. */
function goProxy(dir: string): string {
  const at = join(dir, 'example.com', 'quote', '@v')
  world.write(join(at, 'list'), 'v1.0.0\n')
  world.write(join(at, 'v1.0.0.info'), '{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}\n')
  world.write(join(at, 'v1.0.0.mod'), 'module example.com/quote\n\ngo 1.19\n')
  const files = {
    'go.mod': 'module example.com/quote\n\ngo 1.19\n',
    'quote.go': 'package quote\n\nfunc Go() string { return "Don\'t communicate by sharing memory." }\n',
  }
  const zip = `import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n${Object.entries(files)
    .map(([name, text]) => `    z.writestr("example.com/quote@v1.0.0/${name}", ${JSON.stringify(text)})\n`)
    .join('')}`
  execaSync('python3', ['-c', zip, join(at, 'v1.0.0.zip')])
  return `file://${dir}`
}

describe.skipIf(goMissing !== undefined)(`a Go project${goMissing ? ` (skipped: ${goMissing})` : ''}`, () => {
  it("builds and tests with a module from the user's module cache and a local one; the user's ~/go and build cache are unchanged", async () => {
    world = new World('projects-go')
    world.file('greet/go.mod', 'module example.com/greet\n\ngo 1.19\n')
    world.file('greet/greet.go', 'package greet\n\nfunc Hello(name string) string { return "hello, " + name }\n')
    world.file('go.mod', 'module example.com/proj\n\ngo 1.19\n\nrequire example.com/greet v0.0.0\n\nreplace example.com/greet => ./greet\n')
    world.file(
      'main.go',
      'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/greet"\n\t"example.com/quote"\n)\n\n' +
        'func main() { fmt.Println(greet.Hello("world"), quote.Go()) }\n',
    )
    world.file(
      'main_test.go',
      'package main\n\nimport (\n\t"testing"\n\n\t"example.com/greet"\n)\n\n' +
        'func TestHello(t *testing.T) {\n\tif greet.Hello("test") != "hello, test" {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
    )
    // The user fetched the dependency once (from a proxy of files: no network) and built: ~/go and the build cache hold it.
    // (Go stamps builds from the repository it finds above: the project's, not the checkout holding the test world.)
    await world.git(['init', '-q'])
    const env = {...world.env, GOPROXY: goProxy(join(world.root, 'proxy')), GOSUMDB: 'off'}
    await execa('go', ['get', 'example.com/quote@v1.0.0'], {cwd: world.origin, env, extendEnv: false})
    await execa('go', ['build', './...'], {cwd: world.origin, env, extendEnv: false})
    await world.git(['add', '-A'])
    await world.git(['commit', '-qm', 'a go project'])
    const goDir = join(world.home, 'go')
    const buildCache = join(world.home, '.cache', 'go-build')
    expect(existsSync(join(goDir, 'pkg', 'mod', 'example.com', 'quote@v1.0.0', 'quote.go'))).toBe(true)
    const before = [snapshot(goDir), snapshot(buildCache)]

    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', 'go build ./... && go test ./... && go run .'])
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^ok\s+example.com\/proj\s/m)
    expect(result.stdout).toContain("hello, world Don't communicate by sharing memory.\n")
    expect([snapshot(goDir), snapshot(buildCache)]).toEqual(before)
  })
})

describe.skipIf(goMissing !== undefined)(`a Go project that needs a new module${goMissing ? ` (skipped: ${goMissing})` : ''}`, () => {
  it("fetches it into a layer of the workspace's: go get and go build work inside, the user's ~/go is unchanged", async () => {
    world = new World('projects-go-get')
    world.file('go.mod', 'module example.com/proj\n\ngo 1.19\n')
    world.file('main.go', 'package main\n\nfunc main() {}\n')
    await world.git(['init', '-q'])
    const goDir = join(world.home, 'go')
    world.write(join(goDir, 'pkg', 'mod', 'cache', 'download', 'kept'), 'the user fetched before\n')
    const before = snapshot(goDir)
    // A proxy of files (no network): the module is fetched inside, as with --net and the real proxy.
    const env = {...world.env, GOPROXY: goProxy(join(world.root, 'proxy')), GOSUMDB: 'off'}
    const script = 'go get example.com/quote@v1.0.0 && go build ./... && ls "$(go env GOMODCACHE)/example.com"'
    const result = await world.hmm(['run', '-n', 'g', '--net', 'none', 'sh', '-c', script], {env})
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toBe('quote@v1.0.0\n')
    // The next command in the workspace has it; the user's ~/go is as it was.
    expect((await world.hmm(['exec', 'g', 'go', 'build', './...'], {env})).exitCode).toBe(0)
    expect(snapshot(goDir)).toEqual(before)
  })
})

describe('git in the workspace', () => {
  it('commits, branches, logs and tells the status as in a copy of the repository outside', async () => {
    world = new World('projects-git')
    await world.gitRepo()
    // Fixed dates: the same commits inside and outside have the same names.
    const script = [
      'set -e',
      'export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"',
      'git switch -q -c feature',
      'echo feature > feature.txt',
      'git add feature.txt README.md',
      'git commit -q -m "add a feature"',
      'git switch -q main',
      'git merge -q --no-edit feature',
      'git branch',
      'git log --oneline --graph --all',
      'git status --short --branch',
      'git diff HEAD~1 --stat',
    ].join('\n')
    const copy = join(world.root, 'copy')
    cpSync(world.origin, copy, {recursive: true})
    const outside = await world.sh(script, copy)
    expect(outside).toContain('  feature\n* main\n')
    const result = await world.hmm(['run', '--rm', '--net', 'none', 'sh', '-c', script])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${outside}\n`)
  })
})
