import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  bindMount,
  isMountPoint,
  MountError,
  mountOptions,
  mountTmpfs,
  mountsUnder,
  setMountMethod,
  shutdownMountHelper,
  unmount,
} from '../../../actors/allocdir/index.ts';
import { errCode, needRoot, tempDirs } from './helpers.ts';

describe('allocdir mounts (root)', () => {
  const tmp = tempDirs();
  beforeEach(function () {
    needRoot(this);
  });
  afterEach(() => setMountMethod('helper'));
  after(async () => {
    await tmp.cleanup();
    await shutdownMountHelper();
  });

  for (const method of ['helper', 'spawn'] as const) {
    describe(`via ${method}`, () => {
      beforeEach(() => setMountMethod(method));

      it('mounts a noexec tmpfs, lists it, and unmounts it', async () => {
        const d = await tmp.make();
        await mountTmpfs(d, 1, { noexec: true });
        expect(await isMountPoint(d)).to.equal(true);
        expect(await mountsUnder(path.dirname(d))).to.include(d);
        await unmount(d);
        expect(await isMountPoint(d)).to.equal(false);
        let err: unknown;
        await unmount(d).catch((e) => (err = e));
        expect(err).to.be.instanceOf(MountError);
        expect((err as MountError).code).to.equal('EINVAL');
      });

      it('bind-mounts read-only with a remount', async () => {
        const src = await tmp.make();
        const dst = await tmp.make();
        await writeFile(path.join(src, 'f'), 'x');
        await bindMount(src, dst, { readOnly: true });
        try {
          let err: unknown;
          await writeFile(path.join(dst, 'g'), 'y').catch((e) => (err = e));
          expect(errCode(err)).to.equal('EROFS');
        } finally {
          await unmount(dst);
        }
      });

      it('every bind mount is nosuid,nodev (#10: a setuid file must not run as its owner)', async () => {
        const src = await tmp.make();
        const rw = await tmp.make();
        const ro = await tmp.make();
        await bindMount(src, rw);
        await bindMount(src, ro, { readOnly: true, noexec: true });
        try {
          expect(await mountOptions(rw)).to.include.members(['rw', 'nosuid', 'nodev']);
          expect(await mountOptions(rw)).not.to.include('noexec');
          expect(await mountOptions(ro)).to.include.members(['ro', 'nosuid', 'nodev', 'noexec']);
        } finally {
          await unmount(rw);
          await unmount(ro);
        }
      });
    });
  }

  it('mountsUnder lists nested mounts deepest first; lazy unmount detaches a busy mount', async () => {
    const d = await tmp.make();
    await mountTmpfs(d, 1);
    await mkdir(path.join(d, 'inner'));
    await mountTmpfs(path.join(d, 'inner'), 1);
    expect(await mountsUnder(d)).to.deep.equal([path.join(d, 'inner'), d]);
    let err: unknown;
    await unmount(d).catch((e) => (err = e));
    expect((err as MountError).code).to.equal('EBUSY');
    await unmount(d, { lazy: true });
    expect(await mountsUnder(d)).to.deep.equal([]);
  });

  it('the helper restarts after it is shut down', async () => {
    await shutdownMountHelper();
    const d = await tmp.make();
    await mountTmpfs(d, 1);
    await unmount(d);
    expect(await isMountPoint(d)).to.equal(false);
  });
});
