// Copy-on-write, proven on a real reflink file system: a workspace of a
// 100 MB tree on XFS adds less than 2 MB of used blocks. Uses the XFS that
// .ci/run mounts (HMM_TEST_XFS), or mounts one itself when root with
// mkfs.xfs and loop devices; skipped, with the reason, elsewhere.
import {execa, execaSync} from 'execa'
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, HELPER, PROJECT} from '../world.js'

function whyNoXfs(): string | undefined {
  if (process.env.HMM_TEST_XFS) return existsSync(process.env.HMM_TEST_XFS) ? undefined : `HMM_TEST_XFS=${process.env.HMM_TEST_XFS} does not exist`
  if (process.getuid?.() !== 0) return 'mounting a loop XFS needs root'
  if (execaSync('sh', ['-c', 'command -v mkfs.xfs && command -v losetup'], {reject: false}).exitCode !== 0)
    return 'mkfs.xfs or losetup is missing (apt install xfsprogs)'
  if (!existsSync('/dev/loop-control')) return 'no loop devices'
  return undefined
}

const skipReason = whyNoXfs()
let mountPoint = process.env.HMM_TEST_XFS ?? ''
let image = ''
let mountedHere = false

beforeAll(async () => {
  if (skipReason || process.env.HMM_TEST_XFS) return
  const base = join(PROJECT, '.test-worlds')
  mkdirSync(base, {recursive: true})
  const dir = mkdtempSync(join(base, 'xfs-'))
  image = join(dir, 'xfs.img')
  mountPoint = join(dir, 'mnt')
  mkdirSync(mountPoint)
  await execa('truncate', ['-s', '1G', image])
  await execa('mkfs.xfs', ['-q', '-m', 'reflink=1', image])
  await execa('mount', ['-o', 'loop', image, mountPoint])
  mountedHere = true
})

afterAll(async () => {
  if (mountedHere) {
    // umount of a loop mount set up by mount(8) also detaches the loop device.
    await execa('umount', [mountPoint], {reject: false})
    rmSync(join(image, '..'), {recursive: true, force: true})
  }
})

function usedBytes(path: string): number {
  const stats = statfsSync(path)
  return (stats.blocks - stats.bfree) * stats.bsize
}

describe.skipIf(skipReason !== undefined)(`copy-on-write on XFS${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it.each([
    ['a directory', ''],
    ['a git repository with uncommitted changes', 'git init -q && git add -A && git -c user.name=t -c user.email=t@e commit -qm all && echo dirty >> sub/s'],
  ])('makes a workspace of a 100 MB tree (%s) with less than 2 MB of new blocks, byte-for-byte equal', async (_, prepare) => {
    const world = mkdtempSync(join(mountPoint, 'world-'))
    const home = join(world, 'home')
    const origin = join(home, 'proj')
    mkdirSync(origin, {recursive: true})
    // 100 files of 1 MB: random, so no compression or dedup could explain the saving.
    await execa('sh', ['-c', 'for i in $(seq 100); do head -c 1048576 /dev/urandom > f$i; done; mkdir -p sub; echo small > sub/s'], {cwd: origin})
    if (prepare) await execa('sh', ['-c', prepare], {cwd: origin})
    await execa('sync')
    const before = usedBytes(mountPoint)
    const env = {PATH: process.env.PATH!, HOME: home, HMM_HOME: join(world, 'data'), LANG: 'C.UTF-8'}
    const result = await execa(process.execPath, [BIN, 'run', 'true'], {cwd: origin, env, extendEnv: false, reject: false})
    expect(result.exitCode, String(result.stderr)).toBe(0)
    await execa('sync')
    const added = usedBytes(mountPoint) - before
    expect(added).toBeLessThan(2 * 1024 * 1024)
    const tree = /: (\/.+)$/m.exec(String(result.stderr))![1]
    expect(readFileSync(join(tree, 'f37')).equals(readFileSync(join(origin, 'f37')))).toBe(true)
    expect(readFileSync(join(tree, 'sub/s'), 'utf8')).toBe(readFileSync(join(origin, 'sub/s'), 'utf8'))
    writeFileSync(join(world, 'added-bytes'), String(added))
    rmSync(world, {recursive: true, force: true})
  })

  it('clones as cp -a --reflink=auto does: sparse files keep their holes, extended attributes are kept, blocks are shared', async () => {
    const world = mkdtempSync(join(mountPoint, 'parity-'))
    const src = join(world, 'src')
    mkdirSync(src)
    await execa(
      'sh',
      [
        '-c',
        'truncate -s 100M sparse && dd if=/dev/urandom of=sparse bs=4096 count=2 seek=1000 conv=notrunc status=none && head -c 4000000 /dev/urandom > data',
      ],
      {cwd: src},
    )
    const xattrs = `import json, os, sys
if sys.argv[1] == 'set':
    os.setxattr(sys.argv[2] + '/data', 'user.kept', b'by cp -a')
    os.setxattr(sys.argv[2], 'user.top', b'dir')
else:
    print(json.dumps({p: {n: os.getxattr(sys.argv[2] + p, n).hex() for n in os.listxattr(sys.argv[2] + p)} for p in ['', '/data', '/sparse']}))`
    await execa('python3', ['-c', xattrs, 'set', src])
    await execa('sync')
    const before = usedBytes(mountPoint)
    const cloned = await execa(HELPER, ['clone', src, join(world, 'helper')], {reject: false})
    expect(cloned.exitCode, String(cloned.stderr)).toBe(0)
    await execa('sync')
    expect(usedBytes(mountPoint) - before).toBeLessThan(1024 * 1024)
    await execa('cp', ['-a', '--reflink=auto', src, join(world, 'cp')])
    const what = async (dir: string) => ({
      xattrs: JSON.parse(String((await execa('python3', ['-c', xattrs, 'get', dir])).stdout)),
      files: ['sparse', 'data'].map(name => {
        const stat = lstatSync(join(dir, name))
        return {name, size: stat.size, blocks: stat.blocks}
      }),
    })
    const source = await what(src)
    expect(source.files[0].blocks).toBeLessThan(1024)
    expect(await what(join(world, 'helper'))).toEqual(source)
    expect(await what(join(world, 'cp'))).toEqual(source)
    expect(readFileSync(join(world, 'helper', 'sparse')).equals(readFileSync(join(src, 'sparse')))).toBe(true)
    rmSync(world, {recursive: true, force: true})
  })
})
