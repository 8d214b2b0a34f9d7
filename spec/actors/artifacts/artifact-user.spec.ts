/**
 * Artifacts fetched for a task with a user of its own (exec), berth being root: a `file`
 * source and a checksum file are read as that user, what is written belongs to it, and an
 * archive is not written into a dir of the task dir that the user could not write in.
 */
import { expect } from 'chai';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fetchArtifact, type FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { RwLock } from '../../../actors/allocdir/lock.ts';
import { nobodyIds } from '../../../actors/allocdir/perms.ts';
import type { Artifact } from '../../../model/types.ts';
import { tarOf, tempDirs } from '../allocdir/helpers.ts';
import { refusedLeavingTree } from './refused.ts';

describe('artifacts as the task user (root)', function () {
  this.timeout(30_000);
  const tmp = tempDirs();
  let root: string;
  let taskDir: string;
  let nobody: { uid: number; gid: number };
  before(async function () {
    if (process.geteuid?.() !== 0) {
      console.log('    (skipped: fetching as the task user needs root)');
      this.skip();
    }
    nobody = await nobodyIds();
  });
  afterEach(() => tmp.cleanup());
  beforeEach(async () => {
    root = await tmp.make('berth-artifact-user-');
    await chmod(root, 0o755);
    taskDir = path.join(root, 'alloc', 'task');
    await mkdir(path.join(taskDir, 'local'), { recursive: true });
    await chmod(path.join(taskDir, 'local'), 0o777);
    // A dir of the chroot: root's, 0755.
    await mkdir(path.join(taskDir, 'etc'));
    await writeFile(path.join(taskDir, 'etc', 'passwd'), 'root:x:0:0::/root:/bin/sh\n');
  });

  const ctx = (over: Partial<FetchArtifactContext> = {}): FetchArtifactContext => ({
    dest: { dir: taskDir, allocId: 'a1', built: true, lock: new RwLock() },
    env: {},
    owner: nobody,
    maxBytes: 1024 * 1024,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    ...over,
  });

  const refused = (a: Artifact, c = ctx()) => refusedLeavingTree(root, a, c);

  it('a file source or checksum file only root may read is refused for the task user, fetched for root', async () => {
    await writeFile(path.join(root, 'secret.txt'), 'root only', { mode: 0o600 });
    await writeFile(path.join(root, 'open.txt'), 'anyone');
    await writeFile(path.join(root, 'SUMS'), `${createHash('md5').update('anyone').digest('hex')}  open.txt\n`, { mode: 0o600 });
    expect((await refused({ source: `${root}/secret.txt` })).message).to.match(/Permission denied/);
    expect((await refused({ source: `${root}/open.txt`, options: { checksum: `file:${root}/SUMS` } })).message).to.match(/Permission denied/);
    // berth's own task (raw_exec as root) reads it.
    await fetchArtifact({ source: `${root}/secret.txt`, options: {} }, ctx({ owner: { uid: 0, gid: 0 } }));
    expect(await readFile(path.join(taskDir, 'local', 'secret.txt'), 'utf8')).to.equal('root only');
  });

  it('what is unpacked belongs to the task user; a dir the user cannot write in is not written into', async () => {
    await writeFile(
      path.join(root, 'app.tar.gz'),
      gzipSync(
        tarOf([
          { path: 'bin/run', body: '#!/bin/sh\n', mode: 0o755 },
          { path: 'conf', body: 'x' },
        ]),
      ),
    );
    await writeFile(path.join(root, 'open.txt'), 'anyone');
    await fetchArtifact({ source: `${root}/app.tar.gz` }, ctx());
    for (const p of ['local/bin', 'local/bin/run', 'local/conf']) {
      const st = await stat(path.join(taskDir, p));
      expect([st.uid, st.gid], p).to.deep.equal([nobody.uid, nobody.gid]);
    }
    // Into the task dir's root-owned etc/: refused, etc/passwd untouched.
    await writeFile(path.join(root, 'evil.tar.gz'), gzipSync(tarOf([{ path: 'etc/passwd', body: 'evil::0:0::/:/bin/sh\n' }])));
    expect((await refused({ source: `${root}/evil.tar.gz`, destination: '/' })).message).to.match(/permission denied: uid \d+ may not write in etc/);
    expect((await refused({ source: `${root}/open.txt`, destination: 'etc/', mode: 'any' }, ctx())).message).to.match(/may not write in etc$/);
    // The same archive for a root task goes where root may write.
    await fetchArtifact({ source: `${root}/evil.tar.gz`, destination: '/' }, ctx({ owner: { uid: 0, gid: 0 } }));
    expect(await readFile(path.join(taskDir, 'etc', 'passwd'), 'utf8')).to.match(/^evil/);
  });

  it('a sticky dir: a file of another user in it is not replaced', async () => {
    await mkdir(path.join(taskDir, 'local', 'shared'));
    await chmod(path.join(taskDir, 'local', 'shared'), 0o1777);
    await writeFile(path.join(taskDir, 'local', 'shared', 'theirs'), 'root file');
    await chown(path.join(taskDir, 'local', 'shared', 'theirs'), 0, 0);
    await writeFile(path.join(root, 'theirs.tar'), tarOf([{ path: 'shared/theirs', body: 'replaced' }]));
    expect((await refused({ source: `${root}/theirs.tar` })).message).to.match(/may not write in local\/shared/);
  });

  it('a .tar.bz2 (bzip2 runs as the task user) lands owned by that user', async function () {
    try {
      execFileSync('sh', ['-c', 'command -v bzip2 && command -v tar']);
    } catch {
      this.skip();
    }
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'src', 'f'), 'bz');
    execFileSync('tar', ['-cjf', path.join(root, 'a.tar.bz2'), '-C', path.join(root, 'src'), 'f']);
    await fetchArtifact({ source: `${root}/a.tar.bz2` }, ctx());
    const st = await stat(path.join(taskDir, 'local', 'f'));
    expect([st.uid, await readFile(path.join(taskDir, 'local', 'f'), 'utf8')]).to.deep.equal([nobody.uid, 'bz']);
  });
});
