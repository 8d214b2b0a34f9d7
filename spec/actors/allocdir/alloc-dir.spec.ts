import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AllocDirNotBuiltError, InvalidTaskNameError, MultiError } from '../../../model/errors.ts';
import type { Task } from '../../../model/types.ts';
import { AllocDir, TaskDirBuildError, listMountPoints, mountsUnder, SECRET_MOUNT_MARKER, unmount } from '../../../actors/allocdir/index.ts';
import { mountTableReads } from '../../../actors/allocdir/mounts.ts';
import { errCode, needRoot, tempDirs } from './helpers.ts';

const mode = async (p: string) => (await stat(p)).mode & 0o7777;
const task = (name: string): Task => ({ name, driver: 'mock', config: {} });

describe('AllocDir / TaskDir', () => {
  const tmp = tempDirs();
  const dirs: AllocDir[] = [];
  const newAllocDir = async (id = 'a1') => {
    const ad = new AllocDir(await tmp.make(), id);
    dirs.push(ad);
    return ad;
  };
  afterEach(async () => {
    for (const ad of dirs.splice(0)) await ad.destroy().catch(() => undefined);
  });
  after(() => tmp.cleanup());

  describe('layout and modes', () => {
    it('builds <alloc>/alloc/{data,logs,tmp} with Nomad modes, no task dirs', async () => {
      const ad = await newAllocDir();
      ad.newTaskDir('web');
      await ad.build();
      expect(ad.built).to.equal(true);
      expect(ad.dir).to.equal(path.join(ad.clientAllocDir, 'a1'));
      expect(ad.sharedDir).to.equal(path.join(ad.dir, 'alloc'));
      expect([ad.logsDir, ad.dataDir, ad.tmpDir]).to.deep.equal(['logs', 'data', 'tmp'].map((d) => path.join(ad.sharedDir, d)));
      for (const d of [ad.sharedDir, ad.logsDir, ad.dataDir, ad.tmpDir]) expect(await mode(d)).to.equal(0o777);
      expect(await readdir(ad.dir)).to.deep.equal(['alloc']); // build does not create task dirs
    });

    it('alloc/data belongs to nobody (root)', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      await ad.build();
      expect((await stat(ad.dataDir)).uid).to.equal(65534);
    });

    it('builds a task dir: local/secrets/private 0777, tmp sticky 01777', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build();
      expect(web.dir).to.equal(path.join(ad.dir, 'web'));
      expect(await mode(web.dir)).to.equal(0o777);
      expect(await mode(web.localDir)).to.equal(0o777);
      expect(await mode(web.secretsDir)).to.equal(0o777);
      expect(await mode(web.privateDir)).to.equal(0o777);
      expect(await mode(web.tmpDir)).to.equal(0o1777);
      expect(await readdir(web.dir).then((x) => x.sort())).to.deep.equal(['local', 'private', 'secrets', 'tmp']); // no alloc/ without chroot
      expect(web.lastChrootStats).to.equal(undefined);
    });

    it('rejects bad task names and registers/overwrites by name', async () => {
      const ad = await newAllocDir();
      for (const bad of ['', '.', '..', 'a/b', 'a\0b']) expect(() => ad.newTaskDir(bad)).to.throw(InvalidTaskNameError);
      const a = ad.newTaskDir('web');
      expect(ad.taskDir('web')).to.equal(a);
      const b = ad.newTaskDir('web');
      expect(ad.taskDir('web')).to.equal(b);
      expect(ad.tasks()).to.deep.equal([b]);
      expect(ad.taskDir('nope')).to.equal(undefined);
    });

    it('a task build needs a built alloc dir', async () => {
      const ad = await newAllocDir();
      let err: unknown;
      await ad
        .newTaskDir('web')
        .build()
        .catch((e) => (err = e));
      expect(err).to.be.instanceOf(TaskDirBuildError);
    });

    it('a second build of a built alloc dir keeps its files and builds no task dir', async () => {
      const ad = await newAllocDir();
      ad.newTaskDir('web');
      await ad.build();
      await writeFile(path.join(ad.dataDir, 'kept'), 'x');
      await ad.build();
      expect(ad.built).to.equal(true);
      expect(await readFile(path.join(ad.dataDir, 'kept'), 'utf8')).to.equal('x');
      expect(await readdir(ad.dir)).to.deep.equal(['alloc']);
    });
  });

  describe('secret dirs (root)', () => {
    beforeEach(function () {
      needRoot(this);
    });

    it('mounts secrets and private as 1m noexec tmpfs with a .nomad-mount marker', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build();
      const info = await readFile('/proc/self/mountinfo', 'utf8');
      for (const d of [web.secretsDir, web.privateDir]) {
        const line = info.split('\n').find((l) => l.split(' ')[4] === d)!;
        expect(line, d).to.be.a('string');
        expect(line).to.match(/noexec/);
        expect(line).to.match(/ tmpfs tmpfs /);
        expect(line).to.match(/size=1024k/);
        expect((await stat(path.join(d, SECRET_MOUNT_MARKER))).mode & 0o777).to.equal(0o666);
      }
      // A second build keeps the same mounts (no stacking).
      await web.build();
      expect((await mountsUnder(web.dir)).filter((m) => m === web.secretsDir)).to.have.length(1);
    });

    it('remounts a secret dir whose mount was lost', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build();
      await writeFile(path.join(web.secretsDir, 'token'), 's3cret');
      await unmount(web.secretsDir); // e.g. a reboot
      expect(await mountsUnder(web.secretsDir)).to.deep.equal([]);
      await web.build();
      expect(await mountsUnder(web.secretsDir)).to.deep.equal([web.secretsDir]);
      expect(await readdir(web.secretsDir)).to.deep.equal([SECRET_MOUNT_MARKER]);
    });

    it('chroot mode bind-mounts alloc/ into the task, logs read-only', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await writeFile(path.join(ad.dataDir, 'shared'), 'x');
      await web.build({ chroot: {} });
      expect(await readFile(path.join(web.sharedTaskDir, 'data', 'shared'), 'utf8')).to.equal('x');
      let err: unknown;
      await writeFile(path.join(web.sharedTaskDir, 'logs', 'nope'), 'x').catch((e) => (err = e));
      expect(errCode(err)).to.equal('EROFS');
      await writeFile(path.join(ad.logsDir, 'web.stdout.0'), 'ok'); // writable from the host side
      expect(web.lastChrootStats).to.include({ files: 0, dirs: 0 });
      // Rebuilding does not stack mounts.
      await web.build({ chroot: {} });
      const mounts = await mountsUnder(web.dir);
      expect(mounts.filter((m) => m === web.sharedTaskDir)).to.have.length(1);
      expect(mounts.filter((m) => m === path.join(web.sharedTaskDir, 'logs'))).to.have.length(1);
    });

    it('sizes secrets/ by secretsMB (1 MB when 0), private/ always 1 MB', async () => {
      const ad = await newAllocDir();
      const big = ad.newTaskDir('big', { secretsMB: 3 });
      const zero = ad.newTaskDir('zero', { secretsMB: 0 });
      await ad.build();
      await big.build();
      await zero.build();
      const info = await readFile('/proc/self/mountinfo', 'utf8');
      const size = (d: string) => /size=(\d+k)/.exec(info.split('\n').find((l) => l.split(' ')[4] === d)!)![1];
      expect([big.secretsDir, big.privateDir, zero.secretsDir, zero.privateDir].map(size)).to.deep.equal(['3072k', '1024k', '1024k', '1024k']);
    });
  });

  describe('destroy', () => {
    it('unmounts the six mounts two built task dirs have (root)', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      const api = ad.newTaskDir('api');
      await ad.build();
      await web.build({ chroot: {} });
      await api.build();
      expect((await mountsUnder(ad.dir)).length).to.equal(6);
      await ad.destroy();
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
    });

    it('reads the mount table a bounded number of times, however many tasks (root)', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      const tds = Array.from({ length: 40 }, (_, i) => ad.newTaskDir(`t${i}`));
      await ad.build();
      for (const td of tds) await td.build({ chroot: {} });
      expect((await mountsUnder(ad.dir)).length).to.equal(40 * 4);
      const before = mountTableReads();
      await ad.destroy();
      // One read to list, one to check: a read per task (each listing every task's mounts) made
      // a destroy of n tasks cost n^2.
      expect(mountTableReads() - before).to.be.at.most(2);
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
    });

    it('unmounts everything, removes the tree, and is idempotent', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      const api = ad.newTaskDir('api');
      await ad.build();
      await web.build({ chroot: {} });
      await api.build();
      await writeFile(path.join(ad.dataDir, 'x'), 'x');
      await ad.destroy();
      expect(ad.built).to.equal(false);
      expect(web.built).to.equal(false);
      expect((await listMountPoints()).filter((m) => m.startsWith(ad.dir))).to.deep.equal([]);
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
      await ad.destroy(); // idempotent
      await ad.build(); // and buildable again
      expect(ad.built).to.equal(true);
    });

    it('never follows a symlink out of the alloc dir', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build();
      const outside = await tmp.make('berth-outside-');
      await writeFile(path.join(outside, 'precious'), 'keep me');
      await symlink(outside, path.join(web.localDir, 'link'));
      await symlink(outside, path.join(ad.dataDir, 'link'));
      await ad.destroy();
      expect(await readFile(path.join(outside, 'precious'), 'utf8')).to.equal('keep me');
    });

    it('cleans mounts it did not make itself (e.g. after a restart) before removing', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build({ chroot: {} });
      await writeFile(path.join(ad.dataDir, 'keep'), 'x');
      // A fresh AllocDir for the same path knows no tasks; the mounts are still there.
      const again = new AllocDir(ad.clientAllocDir, ad.allocId);
      await again.destroy();
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
    });

    it('collects every failure into one MultiError and keeps going', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await web.build({ chroot: {} });
      await writeFile(path.join(ad.dataDir, 'a'), 'x');
      const stuck = path.join(web.localDir, 'immutable');
      await writeFile(stuck, 'x');
      try {
        execFileSync('chattr', ['+i', stuck]);
      } catch {
        this.skip(); // filesystem without immutable files
      }
      let err: unknown;
      try {
        await ad.destroy();
      } catch (e) {
        err = e;
      } finally {
        execFileSync('chattr', ['-i', stuck]);
      }
      expect(err).to.be.instanceOf(MultiError);
      expect((err as MultiError).errors.map((e) => e.message).join('\n')).to.match(/failed to remove alloc dir/);
      // Every other step still ran: mounts gone, the rest of the tree removed.
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
      expect(errCode(await lstat(ad.sharedDir).catch((e) => e))).to.equal('ENOENT');
      await ad.destroy();
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
    });
  });

  describe('move', () => {
    it('moves alloc/data and each task local/ (never logs), skipping missing sources', async () => {
      const prev = await newAllocDir('prev');
      prev.newTaskDir('web');
      await prev.build();
      await prev.taskDir('web')!.build();
      await writeFile(path.join(prev.dataDir, 'd'), 'data');
      await writeFile(path.join(prev.taskDir('web')!.localDir, 'l'), 'local');
      await writeFile(path.join(prev.logsDir, 'web.stdout.0'), 'log');
      const next = new AllocDir(prev.clientAllocDir, 'next');
      dirs.push(next);
      await next.build();
      await next.move(prev, [task('web'), task('gone')]);
      expect(await readFile(path.join(next.dataDir, 'd'), 'utf8')).to.equal('data');
      expect(await readFile(path.join(next.dir, 'web', 'local', 'l'), 'utf8')).to.equal('local');
      expect(await readdir(next.logsDir)).to.deep.equal([]);
      expect(await readFile(path.join(prev.logsDir, 'web.stdout.0'), 'utf8')).to.equal('log');
      expect(errCode(await lstat(prev.dataDir).catch((e) => e))).to.equal('ENOENT');
    });

    it('rejects with AllocDirNotBuiltError when not built', async () => {
      const prev = await newAllocDir('prev');
      const next = new AllocDir(prev.clientAllocDir, 'next');
      let err: unknown;
      await next.move(prev, []).catch((e) => (err = e));
      expect(err).to.be.instanceOf(AllocDirNotBuiltError);
      expect((err as Error).message).to.equal(`unable to move to "${next.dir}" - alloc dir is not built`);
    });
  });

  describe('concurrency', () => {
    it('two builds racing share one build', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      const [p1, p2] = [ad.build(), ad.build()];
      expect(p1).to.equal(p2);
      await Promise.all([p1, p2]);
      await Promise.all([web.build({ chroot: {} }), web.build({ chroot: {} }), web.build()]);
      expect(await mode(web.tmpDir)).to.equal(0o1777);
    });

    it('concurrent task builds mount secrets and the shared alloc dir once each (root)', async function () {
      needRoot(this);
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      await ad.build();
      await Promise.all([web.build({ chroot: {} }), web.build({ chroot: {} }), web.build()]);
      const m = await mountsUnder(web.dir);
      expect(m.filter((x) => x === web.secretsDir)).to.have.length(1);
      expect(m.filter((x) => x === web.sharedTaskDir)).to.have.length(1);
    });

    it('destroy during build waits for it, then removes everything; later task builds fail', async () => {
      const ad = await newAllocDir();
      const web = ad.newTaskDir('web');
      const built = ad.build();
      const taskBuilt = web.build({ chroot: {} }); // queued behind the alloc build
      const destroyed = ad.destroy(); // waits for both
      const results = await Promise.allSettled([built, taskBuilt, destroyed]);
      expect(results[0].status).to.equal('fulfilled');
      expect(results[2].status).to.equal('fulfilled');
      if (results[1].status === 'rejected') expect(results[1].reason).to.be.instanceOf(TaskDirBuildError);
      // And a destroy racing an in-flight task build (chroot embedding under way):
      const src = await tmp.make('berth-src-');
      for (let i = 0; i < 50; i++) {
        await mkdir(path.join(src, `d${i}`));
        for (let j = 0; j < 20; j++) await writeFile(path.join(src, `d${i}`, `f${j}`), 'x');
      }
      await ad.build();
      const again = web.build({ chroot: { [src]: '/host' } });
      await new Promise((r) => setImmediate(r));
      await ad.destroy();
      await again; // the build finished before destroy ran (destroy waited for it)
      expect(web.lastChrootStats!.files).to.equal(1000);
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
      let err: unknown;
      await web.build().catch((e) => (err = e));
      expect(err).to.be.instanceOf(TaskDirBuildError);
    });

    it('build then destroy then build, all called at once, ends built', async () => {
      const ad = await newAllocDir();
      await Promise.all([ad.build(), ad.destroy(), ad.build()]);
      expect(ad.built).to.equal(true);
      expect((await stat(ad.dataDir)).isDirectory()).to.equal(true);
    });

    it('many task builds racing a destroy leave no mounts or files behind', async () => {
      const ad = await newAllocDir();
      await ad.build();
      const tds = ['a', 'b', 'c', 'd'].map((n) => ad.newTaskDir(n));
      const builds = tds.map((t) => t.build({ chroot: {} }));
      const destroyed = ad.destroy();
      await Promise.allSettled(builds);
      await destroyed;
      expect(await mountsUnder(ad.dir)).to.deep.equal([]);
      expect(errCode(await lstat(ad.dir).catch((e) => e))).to.equal('ENOENT');
    });
  });
});
