// Proves hmm installs as people install command-line tools (issue 13, item
// 9): `npm pack`, then `npm install -g` of that tarball into a prefix of the
// user's own, where the package's install script builds the helper on this
// machine (the tarball holds its sources, never a compiled helper); then
// `hmm run` works from that install. Last, `npm rebuild` without a C
// compiler must fail with build.js's one line saying what to install.
//
//   npm run install-check        (as a plain user: that is the point)
//
// It works in a new directory under $HOME (not under /tmp, which a sandboxed
// command may write; not inside a repository, whose top hmm would clone),
// removed at the end unless it failed. npm fetches the dependencies from
// the registry, so this is a script, not one of the tests. Where github.com
// and nodejs.org cannot be reached, better-sqlite3 cannot fetch its prebuilt
// binary nor node-gyp the headers: give node-gyp the local ones
// (npm_config_nodedir=/usr, where /usr/include/node is).
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const work = mkdtempSync(join(homedir(), 'hmm-install-check-'))
const prefix = join(work, 'prefix')

function fail(message, output = '') {
  process.stderr.write(`${output}\ninstall-check: FAILED: ${message} (kept ${work})\n`)
  process.exit(1)
}

/** Runs a program; returns its status, its stdout, and its output (stdout and stderr together). */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options})
  return {status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}`}
}

function step(message) {
  process.stdout.write(`install-check: ${message}\n`)
}

step(`as uid ${process.getuid()} in ${work}`)

const packed = run('npm', ['pack', '--pack-destination', work], {cwd: root})
if (packed.status !== 0) fail('npm pack', packed.output)
// npm pack names the tarball on the last line of its stdout.
const tarball = join(work, packed.stdout.trim().split('\n').at(-1))
const listed = execFileSync('tar', ['-tzf', tarball], {encoding: 'utf8'})
if (listed.includes('native-helpers/build/')) fail(`${tarball} holds a compiled helper`)
step(`packed ${tarball} (the helper's sources only)`)

const installed = run('npm', ['install', '--global', '--prefix', prefix, tarball])
if (installed.status !== 0) fail('npm install -g', installed.output)
const hmm = join(prefix, 'bin', 'hmm')
const helper = join(prefix, 'lib', 'node_modules', 'hmm-sandbox', 'native-helpers', 'build', 'hmm-helper')
if (!existsSync(hmm)) fail(`npm install -g made no ${hmm}`, installed.output)
if (!existsSync(helper)) fail(`the install script built no ${helper}`, installed.output)
step(`installed ${hmm}; the install script built ${helper}`)

const origin = join(work, 'origin')
mkdirSync(origin)
writeFileSync(join(origin, 'a.txt'), 'a\n')
const env = {...process.env, HMM_HOME: join(work, 'data'), PATH: `${join(prefix, 'bin')}:${process.env.PATH}`}
const version = run('hmm', ['--version'], {cwd: origin, env})
if (version.status !== 0 || !version.output.startsWith('hmm/')) fail('hmm --version', version.output)
const ran = run('hmm', ['run', 'true'], {cwd: origin, env})
if (ran.status !== 0 || !/^hmm: workspace [0-9a-z]{6}: /m.test(ran.output)) fail('hmm run true', ran.output)
step(`hmm run true: exit 0\n${ran.output.trimEnd()}`)
const made = run('hmm', ['run', 'sh', '-c', 'echo b > b.txt'], {cwd: origin, env})
const diff = run('hmm', ['diff', '--stat'], {cwd: origin, env})
if (made.status !== 0 || diff.status !== 0 || !diff.output.includes('b.txt')) fail('hmm run and hmm diff', `${made.output}${diff.output}`)
step(`hmm diff --stat of a workspace that wrote b.txt:\n${diff.output.trimEnd()}`)

const noCompiler = run('npm', ['rebuild', '--global', '--prefix', prefix, 'hmm-sandbox'], {env: {...process.env, CC: 'hmm-install-check-no-cc'}})
const line = 'hmm: building the sandbox helper needs a C compiler (cc); install one (e.g. apt install gcc) and run npm install again'
if (noCompiler.status === 0 || !noCompiler.output.includes(line)) fail('npm rebuild without a C compiler did not fail with the one line', noCompiler.output)
step(`npm rebuild without a C compiler fails, saying:\n${line}`)

rmSync(work, {recursive: true, force: true})
step('passed')
