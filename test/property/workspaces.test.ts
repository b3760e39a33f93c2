// Property tests (DESIGN "Testing"): random origins — names of every length
// (1 to 255 bytes), unicode, spaces, newlines, leading dashes; empty, text,
// binary and large files, modes, symbolic links (relative, absolute,
// dangling), hard links, empty directories, a FIFO; committed, modified,
// staged, deleted, untracked and ignored mixes; a nested repository; SHA-1
// and SHA-256 repositories and plain directories — and random edits by the
// command (create, modify, modify at the same size with the mtime put back,
// delete, rename, chmod, symlink, commit some). For each:
//   - hmm run succeeds;
//   - hmm diff is exactly the edits: applied by git to a copy of the origin,
//     it gives what the edits give (every file byte for byte, its exec bit,
//     every link's target; ignored files, the nested repository and the FIFO
//     aside);
//   - hmm rm refuses exactly when the workspace holds unsaved work;
//   - hmm apply makes the origin exactly that, or hmm merge brings exactly
//     the commits the command made.
//
// HMM_PROPERTY_RUNS (default 3) sets how many cases, HMM_PROPERTY_SEED (default
// below) the seed; a failure prints the seed and the path of the case, which
// HMM_PROPERTY_SEED and HMM_PROPERTY_PATH replay.
import {execa} from 'execa'
import {createHash} from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, PROJECT, World, workspaceLine} from '../world.js'

const RUNS = Number(process.env.HMM_PROPERTY_RUNS ?? 3)
const SEED = Number(process.env.HMM_PROPERTY_SEED ?? 20261201)
const PATH = process.env.HMM_PROPERTY_PATH
const EDIT_SCRIPT = join(PROJECT, 'test', 'property', 'edit.mjs')
/** Names the generator keeps for itself. */
const RESERVED = new Set(['nested', 'fifo', 'ign-dir', '.gitignore'])
const GITIGNORE = '*.ign\nign-dir/\n'

// ---- generators ----

const NAME_CHARS = ['a', 'b', 'z', 'Q', '0', '7', '-', '_', ' ', '\n', '\t', 'é', '☃', '日', '"', "'", '*', '?', '\\', '#', ':', '~', '=', 'ß', '.']
const shortName = fc.array(fc.constantFrom(...NAME_CHARS), {minLength: 1, maxLength: 10}).map(chars => chars.join(''))
/** Names at and near the 255-byte limit, in one- and three-byte characters. */
const longName = fc.constantFrom('L'.repeat(255), '日'.repeat(85), `${'x'.repeat(100)}${'é'.repeat(77)}`, 'M'.repeat(128))
const fileName = fc
  .oneof({weight: 9, arbitrary: shortName}, {weight: 1, arbitrary: longName})
  .filter(name => !name.startsWith('.') && !name.endsWith('.ign') && !RESERVED.has(name) && Buffer.byteLength(name) <= 255)

/** Bytes made from a seed, for large files without generating each byte. */
function expand(seed: number, length: number): Buffer {
  const out = Buffer.alloc(length)
  for (let offset = 0, n = 0; offset < length; n++) {
    const block = createHash('sha256').update(`${seed}:${n}`).digest()
    offset += block.copy(out, offset)
  }
  return out
}

/** File contents, described (a failing case prints short) and made by bytesOf. */
type Content = {empty: true} | {text: string} | {binary: number[]} | {large: number; kb: number}
const content: fc.Arbitrary<Content> = fc.oneof(
  fc.constant({empty: true as const}),
  fc.string({maxLength: 60}).map(text => ({text})),
  fc.array(fc.integer({min: 0, max: 255}), {maxLength: 200}).map(bytes => ({binary: [0, ...bytes]})),
  fc.record({large: fc.nat(), kb: fc.integer({min: 64, max: 300})}),
)

function bytesOf(c: Content): Buffer {
  if ('text' in c) return Buffer.from(`${c.text}\n`)
  if ('binary' in c) return Buffer.from(c.binary)
  if ('large' in c) return expand(c.large, c.kb * 1024)
  return Buffer.alloc(0)
}

type State = 'committed' | 'modified' | 'staged' | 'deleted' | 'untracked' | 'ignored'

const originFile = fc.record({
  dir: fc.option(fileName, {nil: undefined, freq: 3}),
  name: fileName,
  content,
  exec: fc.boolean(),
  state: fc.constantFrom<State>('committed', 'committed', 'modified', 'staged', 'deleted', 'untracked', 'ignored'),
  changed: content,
})

const linkTarget = fc.oneof(fc.constantFrom('/etc/hostname', 'dangling/nowhere', '../up'), fileName)

const originSpec = fc.record({
  git: fc.boolean(),
  sha256: fc.boolean(),
  files: fc.array(originFile, {maxLength: 8}),
  links: fc.array(fc.record({name: fileName, target: linkTarget, committed: fc.boolean()}), {maxLength: 2}),
  hardLinks: fc.array(fc.record({name: fileName, of: fc.nat()}), {maxLength: 1}),
  emptyDirs: fc.array(fileName, {maxLength: 1}),
  fifo: fc.boolean(),
  nested: fc.boolean(),
  nestedSha256: fc.boolean(),
})

const edit = fc.oneof(
  fc.record({op: fc.constant('create' as const), dir: fc.nat(), name: fileName, content, exec: fc.boolean()}),
  fc.record({op: fc.constant('modify' as const), pick: fc.nat(), content}),
  fc.record({op: fc.constant('same-size' as const), pick: fc.nat(), mask: fc.integer({min: 1, max: 255})}),
  fc.record({op: fc.constant('delete' as const), pick: fc.nat()}),
  fc.record({op: fc.constant('rename' as const), pick: fc.nat(), dir: fc.nat(), name: fileName}),
  fc.record({op: fc.constant('chmod' as const), pick: fc.nat()}),
  fc.record({op: fc.constant('symlink' as const), dir: fc.nat(), name: fileName, target: linkTarget}),
  fc.record({op: fc.constant('commit' as const)}),
)

const scenario = fc.record({origin: originSpec, edits: fc.array(edit, {maxLength: 8}), merge: fc.boolean()})
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

// ---- the model: what the files are, as the test expects them ----

interface Inode {
  content: Buffer
  exec: boolean
}
type Entry = {kind: 'file'; inode: Inode} | {kind: 'link'; target: string}

class Model {
  readonly entries = new Map<string, Entry>()
  /** Directories that must exist (parents of entries aside): empty ones. */
  readonly dirs = new Set<string>()

  static ignored(path: string): boolean {
    return path.endsWith('.ign') || path.startsWith('ign-dir/') || path.includes('.ign/')
  }

  clone(): Model {
    const copy = new Model()
    const inodes = new Map<Inode, Inode>()
    for (const [path, entry] of this.entries) {
      if (entry.kind === 'link') copy.entries.set(path, entry)
      else {
        if (!inodes.has(entry.inode)) inodes.set(entry.inode, {...entry.inode})
        copy.entries.set(path, {kind: 'file', inode: inodes.get(entry.inode)!})
      }
    }
    for (const dir of this.dirs) copy.dirs.add(dir)
    return copy
  }

  allDirs(): string[] {
    const dirs = new Set(this.dirs)
    for (const path of this.entries.keys()) {
      const parts = path.split('/')
      for (let n = 1; n < parts.length; n++) dirs.add(parts.slice(0, n).join('/'))
    }
    return [...dirs].filter(dir => !Model.ignored(`${dir}/`)).sort()
  }

  /** Whether a new entry can be made at path: nothing there, no entry on the way, nothing beneath. */
  free(path: string): boolean {
    if (this.entries.has(path) || this.allDirs().includes(path) || this.dirs.has(path)) return false
    const parts = path.split('/')
    for (let n = 1; n < parts.length; n++) if (this.entries.has(parts.slice(0, n).join('/'))) return false
    return ![...this.entries.keys()].some(other => other.startsWith(`${path}/`))
  }

  namesOf(inode: Inode): string[] {
    return [...this.entries].filter(([, entry]) => entry.kind === 'file' && entry.inode === inode).map(([path]) => path)
  }

  /** What hmm compares: files and links, ignored ones aside. */
  compared(): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [path, entry] of this.entries) {
      if (Model.ignored(path)) continue
      out[path] = entry.kind === 'link' ? `link ${entry.target}` : `file ${entry.inode.exec ? 'x' : '-'} ${sha(entry.inode.content)}`
    }
    return out
  }
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A directory as compared with the model: files (exec bit, hash) and links; .git, the nested repository, the FIFO and ignored paths aside. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const path = rel ? `${rel}/${name}` : name
      if (!rel && (name === '.git' || name === 'nested' || name === 'fifo')) continue
      const full = join(root, path)
      const stat = lstatSync(full)
      if (stat.isDirectory()) walk(path)
      else if (Model.ignored(path)) continue
      else if (stat.isSymbolicLink()) out[path] = `link ${readlinkSync(full)}`
      else if (stat.isFile()) out[path] = `file ${stat.mode & 0o100 ? 'x' : '-'} ${sha(readFileSync(full))}`
    }
  }
  walk('')
  return out
}

// ---- making the origin ----

let world: World
let cases = 0

async function git(args: string[], cwd: string, input?: string): Promise<string> {
  const result = await execa('git', ['--literal-pathspecs', ...args], {cwd, env: world.env, extendEnv: false, input})
  return String(result.stdout)
}

/** Makes the origin of the spec in a new directory; returns it and its model (the working files). */
async function makeOrigin(spec: Scenario['origin']): Promise<{dir: string; model: Model}> {
  const dir = join(world.home, 'src', `case-${++cases}`)
  mkdirSync(dir, {recursive: true})
  const model = new Model()
  const put = (path: string, bytes: Buffer, exec: boolean) => {
    mkdirSync(join(dir, path, '..'), {recursive: true})
    writeFileSync(join(dir, path), bytes)
    chmodSync(join(dir, path), exec ? 0o755 : 0o644)
  }
  writeFileSync(join(dir, '.gitignore'), GITIGNORE)
  model.entries.set('.gitignore', {kind: 'file', inode: {content: Buffer.from(GITIGNORE), exec: false}})
  // Every path claimed once, none beneath another's name.
  const claims = new Model()
  const claim = (path: string) => claims.free(path) && (claims.entries.set(path, {kind: 'link', target: ''}), true)
  const files = spec.files
    .map(file => ({
      ...file,
      path: file.state === 'ignored' ? `${file.dir ? 'ign-dir/' : ''}${file.name.slice(0, 60)}.ign` : file.dir ? `${file.dir}/${file.name}` : file.name,
    }))
    .filter(file => claim(file.path))
  const links = spec.links.filter(link => claim(link.name))
  const hardLinks = spec.hardLinks.filter(hard => claim(hard.name))
  const emptyDirs = spec.emptyDirs.filter(empty => claim(empty))
  if (spec.git) await git(['init', '-q', ...(spec.sha256 ? ['--object-format=sha256'] : [])], dir)
  const committed = spec.git ? files.filter(file => ['committed', 'modified', 'deleted'].includes(file.state)) : []
  for (const file of committed) put(file.path, bytesOf(file.content), file.exec)
  for (const link of links.filter(link => spec.git && link.committed)) symlinkSync(link.target, join(dir, link.name))
  if (spec.git) {
    await git(['add', '--', '.gitignore', ...committed.map(file => file.path), ...links.filter(link => link.committed).map(link => link.name)], dir)
    await git(['commit', '-q', '--allow-empty', '-m', 'base'], dir)
  }
  for (const file of files) {
    if (file.state === 'deleted' && spec.git) {
      await git(['rm', '-q', '--cached', '--', file.path], dir)
      unlinkSync(join(dir, file.path))
      continue
    }
    const bytes = bytesOf(file.state === 'modified' && spec.git ? file.changed : file.content)
    put(file.path, bytes, file.exec)
    if (file.state === 'staged' && spec.git) await git(['add', '--', file.path], dir)
    model.entries.set(file.path, {kind: 'file', inode: {content: bytes, exec: file.exec}})
  }
  for (const link of links) {
    if (!(spec.git && link.committed)) symlinkSync(link.target, join(dir, link.name))
    model.entries.set(link.name, {kind: 'link', target: link.target})
  }
  const regular = [...model.entries].filter(([path, entry]) => entry.kind === 'file' && path !== '.gitignore')
  for (const hard of hardLinks) {
    if (regular.length === 0) continue
    const [path, entry] = regular[hard.of % regular.length]
    linkSync(join(dir, path), join(dir, hard.name))
    model.entries.set(hard.name, entry)
  }
  for (const empty of emptyDirs) {
    mkdirSync(join(dir, empty))
    model.dirs.add(empty)
  }
  if (spec.fifo) await execa('mkfifo', [join(dir, 'fifo')])
  if (spec.nested) {
    const nested = join(dir, 'nested')
    mkdirSync(nested)
    writeFileSync(join(nested, 'inner.txt'), 'inner\n')
    // Of either format: one git cannot record as a gitlink (another format than the outer index's) is left out.
    await git(['init', '-q', ...(spec.nestedSha256 ? ['--object-format=sha256'] : [])], nested)
    await git(['add', 'inner.txt'], nested)
    await git(['commit', '-q', '-m', 'inner'], nested)
  }
  return {dir, model}
}

// ---- the edits ----

interface Step {
  op: string
  path?: string
  to?: string
  content?: string
  exec?: boolean
  target?: string
  message?: string
  touched?: string[]
}

/** Turns the generated edits into steps valid for the model, changing the model as they do. */
function plan(model: Model, edits: Scenario['edits'], isGit: boolean): Step[] {
  const steps: Step[] = []
  const editable = (kind?: 'file') =>
    [...model.entries].filter(([path, entry]) => path !== '.gitignore' && (kind === undefined || entry.kind === kind)).map(([path]) => path)
  const newPath = (dir: number, name: string) => {
    const dirs = ['', ...model.allDirs()]
    const parent = dirs[dir % dirs.length]
    return parent ? `${parent}/${name}` : name
  }
  let commits = 0
  for (const e of edits) {
    if (e.op === 'create' || e.op === 'symlink') {
      const path = newPath(e.dir, e.name)
      if (Model.ignored(path) || !model.free(path)) continue
      if (e.op === 'create') {
        const bytes = bytesOf(e.content)
        model.entries.set(path, {kind: 'file', inode: {content: bytes, exec: e.exec}})
        steps.push({op: 'create', path, content: bytes.toString('base64'), exec: e.exec, touched: [path]})
      } else {
        model.entries.set(path, {kind: 'link', target: e.target})
        steps.push({op: 'symlink', path, target: e.target, touched: [path]})
      }
    } else if (e.op === 'modify' || e.op === 'same-size' || e.op === 'chmod') {
      const files = editable('file')
      if (files.length === 0) continue
      const path = files[e.pick % files.length]
      const inode = (model.entries.get(path) as {inode: Inode}).inode
      const names = model.namesOf(inode)
      if (e.op === 'chmod') {
        inode.exec = !inode.exec
        steps.push({op: 'chmod', path, exec: inode.exec, touched: names})
      } else {
        if (e.op === 'same-size' && inode.content.length === 0) continue
        const bytes = e.op === 'modify' ? bytesOf(e.content) : Buffer.from(inode.content.map(byte => byte ^ e.mask))
        inode.content = bytes
        steps.push({op: e.op, path, content: bytes.toString('base64'), touched: names})
      }
    } else if (e.op === 'delete') {
      const paths = editable()
      if (paths.length === 0) continue
      const path = paths[e.pick % paths.length]
      model.entries.delete(path)
      steps.push({op: 'delete', path, touched: [path]})
    } else if (e.op === 'rename') {
      const paths = editable()
      if (paths.length === 0) continue
      const path = paths[e.pick % paths.length]
      const to = newPath(e.dir, e.name)
      if (Model.ignored(to) || !model.free(to) || to.startsWith(`${path}/`)) continue
      model.entries.set(to, model.entries.get(path)!)
      model.entries.delete(path)
      steps.push({op: 'rename', path, to, touched: [path, to]})
    } else if (isGit) {
      steps.push({op: 'commit', message: `commit ${++commits}`})
    }
  }
  return steps
}

// ---- the property ----

/** hmm as the user runs it; stdout as bytes (a patch is passed on unchanged). */
async function hmm(args: string[], cwd: string): Promise<{exitCode: number; stdout: Buffer; stderr: string}> {
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd,
    env: world.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    encoding: 'buffer',
    stripFinalNewline: false,
  })
  return {exitCode: result.exitCode ?? -1, stdout: Buffer.from(result.stdout), stderr: Buffer.from(result.stderr).toString()}
}

async function checkScenario(s: Scenario): Promise<void> {
  const {dir: origin, model} = await makeOrigin(s.origin)
  const before = model.compared()
  const steps = plan(model, s.edits, s.origin.git)
  const expected = model.compared()
  const planFile = join(world.root, `plan-${cases}.json`)
  writeFileSync(planFile, JSON.stringify(steps))
  const baseHead = s.origin.git ? await git(['rev-parse', 'HEAD'], origin) : ''
  const dirty = s.origin.git
    ? (await git(['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames'], origin))
        .split('\0')
        .filter(Boolean)
        .map(line => line.slice(3))
    : []

  // hmm run succeeds.
  // A copy in the world: the command, run as root, may not reach a checkout beneath a directory only root may search.
  const editScript = join(world.root, 'edit.mjs')
  copyFileSync(EDIT_SCRIPT, editScript)
  const run = await world.hmm(['run', process.execPath, editScript, planFile], {cwd: origin})
  expect(run.exitCode, run.stderr).toBe(0)
  const ws = workspaceLine(run.stderr)
  const label = ws.name ? `${ws.id} (${ws.name})` : ws.id
  const commits = s.origin.git ? (await git(['log', '--format=%s', `${baseHead}..HEAD`], ws.tree)).split('\n').filter(Boolean) : []
  const unsaved = commits.length > 0 || JSON.stringify(expected) !== JSON.stringify(before)

  // hmm diff is exactly the edits: git applies it to a copy of the origin, which becomes what the edits made.
  const diff = await hmm(['diff', ws.id], origin)
  expect(diff.exitCode, diff.stderr).toBe(0)
  const copy = join(world.root, `copy-${cases}`)
  await execa('cp', ['-a', origin, copy])
  if (diff.stdout.length > 0)
    await execa('git', ['apply', '--binary', '--whitespace=nowarn', '-'], {cwd: copy, env: world.env, extendEnv: false, input: diff.stdout})
  expect(snapshot(copy)).toEqual(expected)
  expect(diff.stdout.length > 0).toBe(JSON.stringify(expected) !== JSON.stringify(before))

  // hmm rm refuses exactly when the workspace holds unsaved work.
  const rm = await hmm(['rm', ws.id], origin)
  if (!unsaved) {
    expect(rm.exitCode, rm.stderr).toBe(0)
    expect(existsSync(ws.tree)).toBe(false)
    return
  }
  expect({exitCode: rm.exitCode, stderr: rm.stderr}).toEqual({
    exitCode: 1,
    stderr: `hmm: workspace ${label} has work that was not merged, applied or pushed (hmm rm -f removes it anyway)\n`,
  })

  if (s.merge && commits.length > 0) {
    // hmm merge brings exactly the commits made, or refuses (SPEC merge) where they change what hmm diff does not show.
    // The paths they take are those a commit touches and those whose content at the tip is not the base's (the same
    // here, where history is a line; not after a merge commit). It refuses exactly where such a path held the origin's
    // uncommitted work, was changed and changed back by them, or is not in the files as the last commit left it
    // (changed since, uncommitted, in any way); it merges otherwise.
    const lines = async (args: string[]) => new Set((await git(args, ws.tree)).split('\0').filter(Boolean))
    const touched = await lines(['log', '-z', '--format=', '--name-only', '--no-renames', `${baseHead}..HEAD`])
    const net = await lines(['diff', '--name-only', '-z', '--no-renames', baseHead, 'HEAD'])
    const taken = [...new Set([...touched, ...net])]
    const status = (await git(['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames'], ws.tree)).split('\0').filter(Boolean)
    const changedSince = new Set(status.map(line => line.slice(3)).filter(path => !Model.ignored(path)))
    const mustRefuse = taken.some(path => dirty.includes(path) || !net.has(path) || changedSince.has(path))
    let merged = await hmm(['merge', ws.id], origin)
    // What merge never takes silently (takeback-refusals.test.ts): a link leading out of the tree, which --force
    // takes; a file the origin does not track in the way of the commits (an ignored file the workspace deleted and
    // made a directory of), refused --force or not.
    if (!mustRefuse && merged.stderr.includes(`hmm: workspace ${label}'s commits hold symbolic links that lead out of the tree:\n`)) {
      merged = await hmm(['merge', '--force', ws.id], origin)
    }
    const inTheWay = merged.stderr.includes(`hmm: workspace ${label}'s commits would overwrite or remove files that git does not track in ${origin}:\n`)
    if (!mustRefuse && inTheWay) {
      expect(merged.exitCode, merged.stderr).toBe(1)
      expect(merged.stderr).toMatch(/\nhmm: {3}.*: (ignored|untracked) in .* and present there\n/)
      expect(await git(['rev-parse', 'HEAD'], origin)).toBe(baseHead)
    } else if (!mustRefuse) {
      expect(merged.exitCode, merged.stderr).toBe(0)
      // A fast-forward (the origin's branch did not move): the very commits.
      expect(await git(['rev-parse', 'HEAD'], origin)).toBe(await git(['rev-parse', 'HEAD'], ws.tree))
      expect((await git(['log', '--format=%s', `${baseHead}..HEAD`], origin)).split('\n').filter(Boolean)).toEqual(commits)
    } else {
      expect(merged.exitCode, merged.stderr).toBe(1)
      expect(merged.stderr).toContain(`hmm: workspace ${label}'s commits change what its files do not show:\n`)
      expect(await git(['rev-parse', 'HEAD'], origin)).toBe(baseHead)
    }
  } else if (diff.stdout.length > 0) {
    // hmm apply makes the origin what the edits made, byte for byte.
    // --force: links leading out of the tree are taken too (their refusal: takeback-refusals.test.ts).
    const applied = await hmm(['apply', '--force', ws.id], origin)
    expect({exitCode: applied.exitCode, stderr: applied.stderr}).toEqual({exitCode: 0, stderr: `hmm: applied workspace ${label} to ${origin}\n`})
    expect(snapshot(origin)).toEqual(expected)
  }
  // The workspace is left to the world's removal: an hmm rm -f here would prove nothing and cost an hmm process per case.
}

describe('workspaces of random origins, edited at random', () => {
  beforeAll(() => {
    world = new World('property')
  })
  afterAll(() => world?.dispose())

  it(
    `hmm run, diff, rm, apply and merge keep their promises (${RUNS} cases, seed ${SEED})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async s => {
          try {
            await checkScenario(s)
          } catch (error) {
            world.keepOnFailure()
            throw error
          }
        }),
        {numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: process.env.HMM_PROPERTY_SHRINK !== '1', verbose: 1},
      )
    },
    // Generous: a loaded machine (2 cores shared) has taken 40 s for one case.
    RUNS * 120_000,
  )
})
