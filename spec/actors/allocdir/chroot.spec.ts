import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AllocDir, ChrootError, embed, type ChrootCache } from '../../../actors/allocdir/index.ts';
import { errCode, tempDirs } from './helpers.ts';

const missing = async (p: string) => errCode(await lstat(p).catch((e) => e)) === 'ENOENT';

describe('chroot embedding', () => {
  const tmp = tempDirs();
  const dirs: AllocDir[] = [];
  afterEach(async () => {
    for (const ad of dirs.splice(0)) await ad.destroy().catch(() => undefined);
  });
  after(() => tmp.cleanup());

  /** A source tree: files, a nested dir, a relative symlink, a fifo. */
  async function sourceTree(base: string) {
    await mkdir(path.join(base, 'bin'), { recursive: true });
    await mkdir(path.join(base, 'lib', 'deep', 'deeper'), { recursive: true });
    await writeFile(path.join(base, 'bin', 'tool'), '#!/bin/sh\n');
    await chmod(path.join(base, 'bin', 'tool'), 0o755);
    await writeFile(path.join(base, 'lib', 'deep', 'deeper', 'libx.so'), 'lib');
    await symlink('deep/deeper/libx.so', path.join(base, 'lib', 'libx.so'));
    execFileSync('mkfifo', [path.join(base, 'lib', 'fifo')]);
    return base;
  }

  it('hard-links files, recreates symlinks, skips fifos, keeps the tree', async () => {
    const src = await sourceTree(await tmp.make('berth-src-'));
    const task = await tmp.make('berth-task-');
    const stats = await embed(task, { [src]: '/opt' }, { skip: [] });
    const linked = path.join(task, 'opt', 'lib', 'deep', 'deeper', 'libx.so');
    expect((await stat(linked)).ino).to.equal((await stat(path.join(src, 'lib', 'deep', 'deeper', 'libx.so'))).ino);
    expect(await readlink(path.join(task, 'opt', 'lib', 'libx.so'))).to.equal('deep/deeper/libx.so');
    expect(await missing(path.join(task, 'opt', 'lib', 'fifo'))).to.equal(true);
    expect((await stat(path.join(task, 'opt', 'bin', 'tool'))).mode & 0o777).to.equal(0o755);
    expect(stats).to.include({ files: 2, links: 2, copies: 0, symlinks: 1, skipped: 1 });
    expect(stats.dirs).to.equal(5); // opt, opt/bin, opt/lib, deep, deeper
    expect(stats.ms).to.be.a('number');
  });

  it("takes directory modes and owners from the source, never from the host's same path", async () => {
    // The host has /bin/test as a file (or nothing): the old walk stat'ed '/bin/test/subdir' and
    // failed with ENOTDIR. Mapping a dir there must work, with the source's modes.
    const src = await tmp.make('berth-src-');
    await chmod(src, 0o750);
    await mkdir(path.join(src, 'subdir'), { mode: 0o700 });
    await chmod(path.join(src, 'subdir'), 0o705);
    await writeFile(path.join(src, 'subdir', 'f'), 'x');
    const task = await tmp.make('berth-task-');
    const usr = await tmp.make('berth-usr-'); // mapped onto /usr, whose host mode is 0755
    await chmod(usr, 0o711);
    await embed(task, { [src]: '/bin/test', [usr]: '/usr' }, { skip: [] });
    expect(await readFile(path.join(task, 'bin', 'test', 'subdir', 'f'), 'utf8')).to.equal('x');
    expect((await stat(path.join(task, 'bin', 'test'))).mode & 0o7777).to.equal(0o750);
    expect((await stat(path.join(task, 'bin', 'test', 'subdir'))).mode & 0o7777).to.equal(0o705);
    expect((await stat(path.join(task, 'bin'))).mode & 0o7777).to.equal(0o755); // implied parent
    expect((await stat(path.join(task, 'usr'))).mode & 0o7777).to.equal(0o711);
  });

  it('copies when linking fails (source on another filesystem), keeping owner and mode', async function () {
    let shm: string;
    try {
      shm = await mkdtemp('/dev/shm/berth-src-');
    } catch {
      return this.skip(); // no /dev/shm tmpfs here
    }
    try {
      await writeFile(path.join(shm, 'f'), 'copied');
      await chmod(path.join(shm, 'f'), 0o640);
      if (process.geteuid?.() === 0) execFileSync('chown', ['65534:65534', path.join(shm, 'f')]);
      const task = await tmp.make('berth-task-');
      const stats = await embed(task, { [shm]: '/x' }, { skip: [] });
      expect(stats).to.include({ files: 1, links: 0, copies: 1, bytes: 6 });
      const st = await stat(path.join(task, 'x', 'f'));
      expect(st.ino).to.not.equal((await stat(path.join(shm, 'f'))).ino);
      expect(st.mode & 0o7777).to.equal(0o640);
      if (process.geteuid?.() === 0) expect([st.uid, st.gid]).to.deep.equal([65534, 65534]);
      expect(await readFile(path.join(task, 'x', 'f'), 'utf8')).to.equal('copied');
    } finally {
      await rm(shm, { recursive: true, force: true });
    }
  });

  it('keeps existing entries and only adds what is missing on a rebuild', async () => {
    const src = await sourceTree(await tmp.make('berth-src-'));
    const task = await tmp.make('berth-task-');
    const cache: ChrootCache = {};
    await embed(task, { [src]: '/opt' }, { skip: [], cache });
    // The task changed a file in its chroot and removed another; the host gained one.
    const mine = path.join(task, 'opt', 'bin', 'tool');
    await unlink(mine);
    await writeFile(mine, 'mine');
    await unlink(path.join(task, 'opt', 'lib', 'libx.so'));
    await writeFile(path.join(src, 'lib', 'deep', 'new'), 'n');
    for (const c of [cache, undefined]) {
      const again = await embed(task, { [src]: '/opt' }, { skip: [], cache: c });
      expect(await readFile(mine, 'utf8')).to.equal('mine');
      expect(await readFile(path.join(task, 'opt', 'lib', 'deep', 'new'), 'utf8')).to.equal('n');
      expect(await readlink(path.join(task, 'opt', 'lib', 'libx.so'))).to.equal('deep/deeper/libx.so');
      if (c) expect(again).to.include({ files: 1, symlinks: 1, dirs: 0 });
      else expect(again).to.include({ files: 0, symlinks: 0, dirs: 0 });
    }
  });

  it('the record skips unchanged directories but notices changed ones', async () => {
    const src = await sourceTree(await tmp.make('berth-src-'));
    const task = await tmp.make('berth-task-');
    // Make the host dirs look old, as system dirs are.
    const old = new Date(Date.now() - 3600_000);
    for (const d of ['', 'bin', 'lib', 'lib/deep', 'lib/deep/deeper']) await utimes(path.join(src, d), old, old);
    const cache: ChrootCache = {};
    await embed(task, { [src]: '/opt' }, { skip: [], cache });
    const second = await embed(task, { [src]: '/opt' }, { skip: [], cache });
    expect(second).to.include({ files: 0, dirs: 0, symlinks: 0 });
    // Proof the record is used: a removal hidden by an old task-side mtime goes unnoticed with it,
    // and a walk without the record restores it.
    const deeper = path.join(task, 'opt', 'lib', 'deep', 'deeper');
    await unlink(path.join(deeper, 'libx.so'));
    await utimes(deeper, old, old);
    expect((await embed(task, { [src]: '/opt' }, { skip: [], cache })).files).to.equal(0);
    expect((await embed(task, { [src]: '/opt' }, { skip: [] })).files).to.equal(1);
    // A new host file bumps its directory's mtime: embedded next time.
    await writeFile(path.join(src, 'bin', 'other'), 'o');
    const third = await embed(task, { [src]: '/opt' }, { skip: [], cache });
    expect(third.files).to.equal(1);
    // A file the task removed bumps the task-side mtime: restored next time.
    await unlink(path.join(task, 'opt', 'lib', 'deep', 'deeper', 'libx.so'));
    const fourth = await embed(task, { [src]: '/opt' }, { skip: [], cache });
    expect(fourth.files).to.equal(1);
    expect(await readFile(path.join(task, 'opt', 'lib', 'deep', 'deeper', 'libx.so'), 'utf8')).to.equal('lib');
  });

  it('creates directories with the owner and mode of their source directory', async () => {
    const src = await tmp.make('berth-src-');
    await mkdir(path.join(src, 'etc'));
    await chmod(path.join(src, 'etc'), 0o751);
    if (process.geteuid?.() === 0) execFileSync('chown', ['65534:65534', path.join(src, 'etc')]);
    await writeFile(path.join(src, 'etc', 'x'), '');
    const task = await tmp.make('berth-task-');
    await embed(task, { [src]: '/' }, { skip: [] });
    const etc = await stat(path.join(task, 'etc'));
    expect(etc.mode & 0o7777).to.equal(0o751); // not the host's /etc (0755)
    if (process.geteuid?.() === 0) expect([etc.uid, etc.gid]).to.deep.equal([65534, 65534]);
  });

  it('recreates a top-level symlink whose target another entry embeds, follows it otherwise', async () => {
    const root = await tmp.make('berth-src-');
    await mkdir(path.join(root, 'usr', 'bin'), { recursive: true });
    await writeFile(path.join(root, 'usr', 'bin', 'sh'), 'sh');
    await symlink('usr/bin', path.join(root, 'bin'));
    const t1 = await tmp.make('berth-task-');
    await embed(t1, { [path.join(root, 'bin')]: '/bin', [path.join(root, 'usr')]: '/usr' }, { skip: [] });
    expect(await readlink(path.join(t1, 'bin'))).to.equal('usr/bin');
    expect(await readFile(path.join(t1, 'bin', 'sh'), 'utf8')).to.equal('sh');
    const t2 = await tmp.make('berth-task-');
    await embed(t2, { [path.join(root, 'bin')]: '/bin' }, { skip: [] }); // /usr not embedded: follow (Nomad)
    expect((await lstat(path.join(t2, 'bin'))).isDirectory()).to.equal(true);
    expect(await readFile(path.join(t2, 'bin', 'sh'), 'utf8')).to.equal('sh');
  });

  it('never walks into a symlink planted in the task dir, and refuses escaping destinations', async () => {
    const src = await sourceTree(await tmp.make('berth-src-'));
    const task = await tmp.make('berth-task-');
    const outside = await tmp.make('berth-outside-');
    await mkdir(path.join(task, 'opt'));
    await symlink(outside, path.join(task, 'opt', 'lib'));
    await embed(task, { [src]: '/opt' }, { skip: [] });
    expect(await missing(path.join(outside, 'deep'))).to.equal(true);
    let err: unknown;
    await embed(task, { [src]: '../../escape' }, { skip: [] }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(ChrootError);
    await symlink(outside, path.join(task, 'planted'));
    err = undefined;
    await embed(task, { [src]: '/planted/x' }, { skip: [] }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(ChrootError);
    expect(await missing(path.join(outside, 'x'))).to.equal(true);
  });

  it('can be cancelled', async () => {
    const src = await sourceTree(await tmp.make('berth-src-'));
    const task = await tmp.make('berth-task-');
    const ac = new AbortController();
    const p = embed(task, { [src]: '/opt' }, { skip: [], signal: ac.signal });
    ac.abort(new Error('stop'));
    let err: unknown;
    await p.catch((e) => (err = e));
    expect((err as Error).message).to.equal('stop');
  });

  describe('#2522: never embeds the client alloc dir', () => {
    // Mirrors Nomad's TestTaskDir_NonRoot/..._EmbedDirs regression test, via TaskDir.build.
    async function setup() {
      const rootDir = await tmp.make('berth-2522-');
      const clientAllocDir = path.join(rootDir, 'nomad');
      await mkdir(clientAllocDir, { mode: 0o777 });
      await mkdir(path.join(rootDir, 'etc'), { mode: 0o777 });
      await writeFile(path.join(rootDir, 'etc', 'hosts'), 'h');
      const ad = new AllocDir(clientAllocDir, 'test', { clientMountsDir: path.join(rootDir, 'mounts') });
      dirs.push(ad);
      const web = ad.newTaskDir('web');
      await ad.build();
      return { rootDir, clientAllocDir, ad, web };
    }

    it('mapping a root that contains the alloc dir to "/" terminates; etc embedded, nomad not', async () => {
      const { rootDir, clientAllocDir, web } = await setup();
      await web.build({ chroot: { [rootDir]: '/' } });
      expect((await stat(path.join(clientAllocDir, 'test', 'web', 'etc'))).isDirectory()).to.equal(true);
      expect(await readFile(path.join(web.dir, 'etc', 'hosts'), 'utf8')).to.equal('h');
      expect(await missing(path.join(clientAllocDir, 'test', 'web', 'nomad'))).to.equal(true);
    });

    it('also for the alloc dir parent mapped elsewhere, and through a symlink to the root', async () => {
      const { rootDir, web } = await setup();
      await web.build({ chroot: { [rootDir]: '/data' } });
      expect(await readFile(path.join(web.dir, 'data', 'etc', 'hosts'), 'utf8')).to.equal('h');
      expect(await missing(path.join(web.dir, 'data', 'nomad'))).to.equal(true);
      // Nomad's exact string match misses this one; real paths do not.
      const alias = path.join(path.dirname(rootDir), path.basename(rootDir) + '-alias');
      await symlink(rootDir, alias);
      try {
        await web.build({ chroot: { [alias]: '/via-link', [path.join(alias, 'nomad')]: '/direct' } });
        expect(await readFile(path.join(web.dir, 'via-link', 'etc', 'hosts'), 'utf8')).to.equal('h');
        expect(await missing(path.join(web.dir, 'via-link', 'nomad'))).to.equal(true);
        expect(await missing(path.join(web.dir, 'direct'))).to.equal(true);
      } finally {
        await rm(alias);
      }
    });

    it('never embeds the task dir into itself even without a skip list', async () => {
      const rootDir = await tmp.make('berth-2522-');
      const task = path.join(rootDir, 'a', 'task');
      await mkdir(task, { recursive: true });
      await writeFile(path.join(rootDir, 'f'), 'f');
      const stats = await embed(task, { [rootDir]: '/' }, { skip: [] });
      expect(await readFile(path.join(task, 'f'), 'utf8')).to.equal('f');
      expect((await stat(path.join(task, 'a'))).isDirectory()).to.equal(true);
      expect(await missing(path.join(task, 'a', 'task'))).to.equal(true);
      expect(stats.files).to.equal(1);
    });
  });
});
