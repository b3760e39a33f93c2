// Which changes hmm diff shows as text though git takes them for binary
// (attacker's review 8, F9). git calls a file binary when a NUL byte is
// among its first 8000 bytes, and shows only a base85 "GIT binary patch"
// of it; bash, dash and node still run a script with a NUL in a comment, so
// one NUL would hide from review the line that matters. So a binary change
// is shown as text when its file was text before (the command cannot
// choose the old side), or its new content starts with `#!` or is text but
// for NUL bytes. Each is given git's `diff` attribute in an attributes file
// of hmm's (core.attributesFile), which the origin's own attribute files
// outrank. The patch stays one git apply applies: git applies text patches
// with NUL bytes in them. What is still binary is named (binaryPaths).
// hmm log -p applies the rule to each commit's change from each parent.
import {rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Workspace} from '../workspaces/workspace.js'
import {ALL_GITLINKS, gitBytes} from './git.js'
import {privateEnv, privateRepo} from './private-repo.js'

/** As many bytes as git looks at to tell binary from text. */
const FIRST_FEW_BYTES = 8000

/** Whether a patch (with --binary or without: log -p), or a stat, may hold a change git shows as binary: a cheap look, so the common case costs nothing more. */
export const mayHoldBinary = (output: Buffer) => output.includes('GIT binary patch\n') || output.includes(' | Bin ') || output.includes('\nBinary files ')

interface Change {
  /** Paths on either side: one for a change in place, two for a rename or copy. */
  paths: string[]
  oldBlob?: string
  newBlob?: string
  binary: boolean
}

const NO_BLOB = /^0+$/

/**
 * The changes from `from` to `to`, parsed from `diff-tree -z --raw
 * --numstat` (raw records first, numstat's in the same order); git takes
 * attribute files from the index `attributeIndex` only (not hmm's private index:
 * it holds the workspace's files, the command's .gitattributes among them).
 */
async function changesBetween(workspace: Workspace, {from, to}: Shown, attributeIndex: string, attributes?: string): Promise<Change[]> {
  const settings = attributes ? ['-c', `core.attributesFile=${attributes}`] : []
  const args = [...settings, 'diff-tree', ...ALL_GITLINKS, '-r', '-M', '-z', '--no-abbrev', '--raw', '--numstat', '--no-ext-diff', '--no-textconv', from, to]
  const env = {...privateEnv(privateRepo(workspace.gitDir)), GIT_INDEX_FILE: attributeIndex}
  const fields = (await gitBytes(args, {cwd: workspace.gitDir, env})).stdout.toString('latin1').split('\0')
  const changes: Change[] = []
  let index = 0
  while (fields[index]?.startsWith(':')) {
    const [, , oldBlob, newBlob, status] = fields[index].slice(1).split(' ')
    const count = /^[RC]/.test(status) ? 2 : 1
    changes.push({
      paths: fields.slice(index + 1, index + 1 + count),
      oldBlob: NO_BLOB.test(oldBlob) ? undefined : oldBlob,
      newBlob: NO_BLOB.test(newBlob) ? undefined : newBlob,
      binary: false,
    })
    index += 1 + count
  }
  for (const change of changes) {
    change.binary = fields[index].startsWith('-\t-\t')
    // A rename's or copy's numstat record has its two paths as fields of their own (a path may itself end in a tab).
    index += change.paths.length === 2 ? 3 : 1
  }
  return changes
}

/** The first bytes of each blob (cat-file --batch: `<id> blob <size>`, the content, a newline). */
async function firstBytes(workspace: Workspace, blobs: string[]): Promise<Map<string, Buffer>> {
  const output = (
    await gitBytes(['cat-file', '--batch'], {
      cwd: workspace.gitDir,
      env: privateEnv(privateRepo(workspace.gitDir)),
      input: blobs.map(blob => `${blob}\n`).join(''),
    })
  ).stdout
  const found = new Map<string, Buffer>()
  let at = 0
  for (const blob of blobs) {
    const newline = output.indexOf(10, at)
    const size = Number(output.subarray(at, newline).toString('latin1').split(' ')[2])
    found.set(blob, output.subarray(newline + 1, newline + 1 + Math.min(size, FIRST_FEW_BYTES)))
    at = newline + 1 + size + 1
  }
  return found
}

/** Text as git tells it: no NUL byte among the first bytes. */
const isText = (bytes: Buffer) => !bytes.includes(0)

/** Text but for NUL bytes: none of the other control bytes that text does not hold (tab, line ends, form feed and escape aside). */
const textButForNul = (bytes: Buffer) =>
  !bytes.some(byte => byte !== 0 && ((byte < 0x20 && ![0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b].includes(byte)) || byte === 0x7f))

function shownAsText(change: Change, bytes: Map<string, Buffer>): boolean {
  const before = change.oldBlob && bytes.get(change.oldBlob)
  const after = change.newBlob && bytes.get(change.newBlob)
  if (before && isText(before)) return true
  return !!after && (after.subarray(0, 2).toString('latin1') === '#!' || textButForNul(after))
}

/** A path (its bytes as latin1) as a pattern of an attributes file that matches it alone: anchored, glob characters escaped, C-quoted. */
function exactPattern(path: string): string {
  let quoted = ''
  for (const char of `/${path.replace(/[*?[\\]/g, '\\$&')}`) {
    const byte = char.charCodeAt(0)
    if (char === '\\' || char === '"') quoted += `\\${char}`
    else quoted += byte < 0x20 || byte > 0x7e ? `\\${byte.toString(8).padStart(3, '0')}` : char
  }
  return `"${quoted}" diff\n`
}

/** A change shown: from one tree (or commit) to another. */
export interface Shown {
  from: string
  to: string
}

/** The binary changes of each change shown, in order. */
async function binaryChanges(workspace: Workspace, shown: Shown[], index: string, attributes?: string): Promise<Change[]> {
  const changes: Change[] = []
  // One after another: log -p's commits are few, and each is one small git.
  for (const change of shown) changes.push(...(await changesBetween(workspace, change, index, attributes)).filter(one => one.binary))
  return changes
}

/**
 * The changes shown (`output`, made by `render` without an attributes file;
 * one for hmm diff, each commit's from each parent for hmm log -p) made
 * again by `render` with the binary changes that are text to a reader
 * shown as text, each judged from its own old and new side (the
 * attributes file names paths: a path one commit's change shows as text is
 * text in the others' too, which hides nothing); and the paths still shown
 * as binary.
 */
export async function withTextShown(
  workspace: Workspace,
  shown: Shown[],
  output: Buffer,
  render: (attributes: string) => Promise<Buffer>,
  attributeTree?: string,
): Promise<{output: Buffer; binary: string[]}> {
  const attributes = join(workspace.gitDir, `attributes.text-${process.pid}`)
  // The attribute files `render` reads: those of `attributeTree` (hmm diff: the fork tree's), else none (git log reads no index).
  const index = join(workspace.gitDir, `index.text-${process.pid}`)
  try {
    if (attributeTree)
      await gitBytes(['read-tree', attributeTree], {cwd: workspace.gitDir, env: {...privateEnv(privateRepo(workspace.gitDir)), GIT_INDEX_FILE: index}})
    const binaries = await binaryChanges(workspace, shown, index)
    const blobs = binaries.flatMap(change => [change.oldBlob, change.newBlob]).filter(blob => blob !== undefined)
    const bytes = await firstBytes(workspace, [...new Set(blobs)])
    const text = binaries.filter(change => shownAsText(change, bytes))
    if (text.length === 0) return {output, binary: binaryPaths(binaries)}
    const patterns = new Set(text.flatMap(change => change.paths.map(exactPattern)))
    writeFileSync(attributes, Buffer.from([...patterns].join(''), 'latin1'))
    const rendered = await render(attributes)
    return {output: rendered, binary: binaryPaths(await binaryChanges(workspace, shown, index, attributes))}
  } finally {
    rmSync(attributes, {force: true})
    rmSync(index, {force: true})
  }
}

/** The paths of binary changes that write something (a deletion shows all it does), by their new names, as UTF-8, each once. */
function binaryPaths(changes: Change[]): string[] {
  return [...new Set(changes.filter(change => change.newBlob).map(change => Buffer.from(change.paths.at(-1)!, 'latin1').toString('utf8')))]
}
