/**
 * bzip2 and xz artifacts: tarballs (`.tar.bz2`, `.tbz2`, `.tar.xz`, `.txz`) and single files
 * (`.bz2`, `.xz`) made at test time with the system's tar, bzip2 and xz, unpacked through the
 * same escape-proof staging as every other archive, bounded by the ephemeral disk.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fetchArtifact, type FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { ArtifactDownloadError } from '../../../actors/artifacts/errors.ts';
import { RwLock } from '../../../actors/allocdir/lock.ts';
import { SnapshotEscapeError, SnapshotLimitError } from '../../../model/errors.ts';
import type { Artifact } from '../../../model/types.ts';
import { tarOf, tempDirs } from '../allocdir/helpers.ts';
import { refusedLeavingTree } from './refused.ts';

const have = (bin: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${bin}`]);
    return true;
  } catch {
    return false;
  }
};

/** `data` compressed by the system's `bzip2` or `xz`. */
const compress = (prog: 'bzip2' | 'xz', data: Buffer) => execFileSync(prog, ['-c'], { input: data, maxBuffer: 64 * 1024 * 1024 });

describe('artifacts: .tar.bz2, .tar.xz, .bz2 and .xz are unpacked through the staging', function () {
  this.timeout(60_000);
  const tmp = tempDirs();
  let root: string;
  let taskDir: string;
  before(function () {
    if (!have('tar') || !have('bzip2') || !have('xz')) this.skip(); // .ci/run installs them
  });
  afterEach(() => tmp.cleanup());
  beforeEach(async () => {
    root = await tmp.make('berth-compressed-');
    taskDir = path.join(root, 'alloc', 'task');
    await mkdir(path.join(taskDir, 'local'), { recursive: true });
    await mkdir(path.join(root, 'src', 'app', 'bin'), { recursive: true });
    await writeFile(path.join(root, 'src', 'app', 'bin', 'serve'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await writeFile(path.join(root, 'src', 'app', 'README'), 'read me\n');
  });

  const ctx = (over: Partial<FetchArtifactContext> = {}): FetchArtifactContext => ({
    dest: { dir: taskDir, allocId: 'a1', built: true, lock: new RwLock() },
    env: {},
    maxBytes: 1024 * 1024,
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    ...over,
  });

  const refused = (a: Artifact, c = ctx()) => refusedLeavingTree(root, a, c);

  for (const [flag, ext] of [
    ['-j', 'tar.bz2'],
    ['-j', 'tbz2'],
    ['-J', 'tar.xz'],
    ['-J', 'txz'],
  ] as const) {
    it(`a .${ext} made by tar ${flag} is unpacked into local/, modes kept`, async () => {
      const archive = path.join(root, `app.${ext}`);
      execFileSync('tar', [flag, '-cf', archive, '-C', path.join(root, 'src'), 'app']);
      await fetchArtifact({ source: archive }, ctx());
      expect(await readFile(path.join(taskDir, 'local', 'app', 'README'), 'utf8')).to.equal('read me\n');
      expect((await stat(path.join(taskDir, 'local', 'app', 'bin', 'serve'))).mode & 0o777).to.equal(0o755);
      expect(await readdir(path.join(taskDir, 'local'))).to.deep.equal(['app']);
    });
  }

  it('single .bz2 and .xz files are decompressed under their own name, or to a mode "file" path', async () => {
    await writeFile(path.join(root, 'conf.bz2'), compress('bzip2', Buffer.from('a=1\n')));
    await writeFile(path.join(root, 'data.xz'), compress('xz', Buffer.from('b=2\n')));
    await fetchArtifact({ source: `${root}/conf.bz2` }, ctx());
    await fetchArtifact({ source: `file://${root}/data.xz`, destination: 'local/etc/data.conf', mode: 'file' }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'conf'), 'utf8')).to.equal('a=1\n');
    expect(await readFile(path.join(taskDir, 'local', 'etc', 'data.conf'), 'utf8')).to.equal('b=2\n');
  });

  it('archive = "false" keeps a .tar.xz as it is; archive = "tar.bz2" names the format of an odd name', async () => {
    const archive = path.join(root, 'app.tar.xz');
    execFileSync('tar', ['-J', '-cf', archive, '-C', path.join(root, 'src'), 'app']);
    execFileSync('tar', ['-j', '-cf', path.join(root, 'download'), '-C', path.join(root, 'src'), 'app']);
    await fetchArtifact({ source: archive, options: { archive: 'false' } }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'app.tar.xz'))).to.deep.equal(await readFile(archive));
    await fetchArtifact({ source: `${root}/download`, destination: 'local/unpacked', options: { archive: 'tar.bz2' } }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'unpacked', 'app', 'README'), 'utf8')).to.equal('read me\n');
  });

  it('hostile: a zip slip and a link out in a .tar.bz2 / .tar.xz write nothing outside', async () => {
    await writeFile(path.join(root, 'slip.tar.bz2'), compress('bzip2', tarOf([{ path: '../../outside-evil', body: 'x' }])));
    await writeFile(
      path.join(root, 'link.tar.xz'),
      compress(
        'xz',
        tarOf([
          { path: 'a', type: 'SymbolicLink', linkpath: '../../..' },
          { path: 'a/evil', body: 'x' },
        ]),
      ),
    );
    expect(await refused({ source: `${root}/slip.tar.bz2` })).to.be.instanceOf(SnapshotEscapeError);
    expect(await refused({ source: `${root}/link.tar.xz` })).to.be.instanceOf(SnapshotEscapeError);
  });

  it('bombs: a .tar.bz2, a .tar.xz, a .bz2 and a .xz that expand past the ephemeral disk bound are refused', async () => {
    const big = 16 * 1024 * 1024;
    const tar = tarOf([{ path: 'zeros', body: Buffer.alloc(big) }]);
    await writeFile(path.join(root, 'bomb.tar.bz2'), compress('bzip2', tar));
    await writeFile(path.join(root, 'bomb.tar.xz'), compress('xz', tar));
    await writeFile(path.join(root, 'bomb.bz2'), compress('bzip2', Buffer.alloc(big)));
    await writeFile(path.join(root, 'bomb.xz'), compress('xz', Buffer.alloc(big)));
    expect((await stat(path.join(root, 'bomb.tar.bz2'))).size).to.be.lessThan(64 * 1024);
    expect(await refused({ source: `${root}/bomb.tar.bz2` })).to.be.instanceOf(SnapshotLimitError);
    expect(await refused({ source: `${root}/bomb.tar.xz` })).to.be.instanceOf(SnapshotLimitError);
    expect((await refused({ source: `${root}/bomb.bz2` })).message).to.match(/larger than the limit of 1048576 bytes/);
    expect((await refused({ source: `${root}/bomb.xz` })).message).to.match(/larger than the limit of 1048576 bytes/);
  });

  it('corrupt .bz2 and .tar.xz files fail by name, leaving nothing', async () => {
    await writeFile(path.join(root, 'bad.bz2'), Buffer.concat([Buffer.from('BZh9'), Buffer.alloc(64, 7)]));
    await writeFile(path.join(root, 'bad.tar.xz'), Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(64, 7)]));
    expect(await refused({ source: `${root}/bad.bz2` })).to.be.instanceOf(ArtifactDownloadError);
    expect((await refused({ source: `${root}/bad.tar.xz` })).message).to.match(/xz/);
  });
});
