/**
 * Hostile archives against restoreSnapshot: one spec per finding of issue #10 (symlink chains,
 * setuid, unbounded or undeclared compression, a failed restore changing dest, untyped errors).
 */
import { expect } from 'chai';
import { chown, lstat, readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { SnapshotEscapeError, SnapshotLimitError } from '../../../model/errors.ts';
import { AllocDir, SnapshotStreamError, restoreSnapshot } from '../../../actors/allocdir/index.ts';
import { needRoot, streamOf, tarOf, tempDirs, type TarEntry } from './helpers.ts';
import { fingerprint } from './tree.ts';

/** Header blocks with a pax header in front (for names past 100 bytes). */
function paxEntry(p: string, opts: { type?: 'File' | 'SymbolicLink'; linkpath?: string; body?: string } = {}): Buffer {
  const body = Buffer.from(opts.body ?? '');
  const type = opts.type ?? 'File';
  const data = {
    path: p,
    type,
    mode: 0o644,
    size: type === 'File' ? body.length : 0,
    mtime: new Date(),
    uid: 0,
    gid: 0,
    ...(opts.linkpath ? { linkpath: opts.linkpath } : {}),
  };
  const h = new Header(data);
  h.encode();
  const pax = new Pax({ path: p, linkpath: opts.linkpath, mtime: data.mtime, size: data.size });
  const parts = [pax.encode(), h.block!];
  if (body.length) parts.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  return Buffer.concat(parts);
}

describe('restoreSnapshot against hostile archives (#10)', () => {
  const tmp = tempDirs();
  const dirs: AllocDir[] = [];
  let client: string;
  let outside: string;
  let n = 0;
  const newAllocDir = async () => {
    const ad = new AllocDir(client, `dest-${++n}`);
    dirs.push(ad);
    await ad.build();
    return ad;
  };
  before(async () => {
    const root = await tmp.make('berth-hostile-');
    client = path.join(root, 'client');
    outside = path.join(root, 'outside');
    await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(client), fs.mkdir(outside)]));
    await writeFile(path.join(outside, 'secret'), 'top secret');
  });
  afterEach(async () => {
    for (const ad of dirs.splice(0)) await ad.destroy().catch(() => undefined);
  });
  after(() => tmp.cleanup());

  /** Restores `tar` into a fresh dest; returns the error and proves dest is unchanged and no staging is left. */
  async function refused(tar: Buffer, prep?: (ad: AllocDir) => Promise<void>, opts: { maxBytes?: number; gzip?: boolean } = {}) {
    const dest = await newAllocDir();
    await prep?.(dest);
    const before = await fingerprint(dest.dir);
    let err: unknown;
    await restoreSnapshot(streamOf(tar), dest, { prevAllocId: 'p', ...opts }).then(
      () => undefined,
      (e) => (err = e),
    );
    expect(await fingerprint(dest.dir), 'dest unchanged').to.deep.equal(before);
    expect(
      (await readdir(dest.dir)).filter((x) => x.startsWith('.restore-')),
      'staging removed',
    ).to.deep.equal([]);
    expect(await readdir(outside)).to.deep.equal(['secret']);
    return err;
  }

  describe('finding 1: symlinks are judged where the kernel resolves them', () => {
    it('refuses the chain b -> . then a -> b/b/b/b/../../../../outside (target exists)', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: '.' },
          { path: 'alloc/data/a', type: 'SymbolicLink', linkpath: 'b/b/b/b/../../../../outside/secret' },
        ]),
      );
      expect(err).to.be.instanceOf(SnapshotEscapeError);
      expect((err as Error).message).to.equal('archive contains symlink that escapes alloc dir');
    });

    it('refuses the same chain when the target does not exist (dangling)', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: '.' },
          { path: 'alloc/data/a', type: 'SymbolicLink', linkpath: 'b/b/b/b/../../../../nowhere/x' },
        ]),
      );
      expect(err).to.be.instanceOf(SnapshotEscapeError);
    });

    it('refuses a chain declared in the opposite order (the link first, its helper last)', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/a', type: 'SymbolicLink', linkpath: 'b/b/b/b/../../../../outside' },
          { path: 'alloc/data/f', body: 'x' },
          { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: '.' },
        ]),
      );
      expect(err).to.be.instanceOf(SnapshotEscapeError);
    });

    it('refuses a new link that makes a link already in dest lead outside', async () => {
      // dest already has old -> hop/../../..: inside while hop is missing. The archive makes hop -> .
      const err = await refused(tarOf([{ path: 'alloc/data/hop', type: 'SymbolicLink', linkpath: '.' }]), async (ad) => {
        const fs = await import('node:fs/promises');
        await fs.symlink('hop/hop/../../../../outside', path.join(ad.dataDir, 'old'));
      });
      expect(err).to.be.instanceOf(SnapshotEscapeError);
    });

    it('keeps links that stay inside, even through other links', async () => {
      const dest = await newAllocDir();
      await restoreSnapshot(
        streamOf(
          tarOf([
            { path: 'alloc/data/dir/f', body: 'hello' },
            { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: 'dir' },
            { path: 'alloc/data/a', type: 'SymbolicLink', linkpath: 'b/../b/f' },
            { path: 'web/local/up', type: 'SymbolicLink', linkpath: '../../alloc/data/a' },
          ]),
        ),
        dest,
        { prevAllocId: 'p' },
      );
      expect(await readFile(path.join(dest.dir, 'web', 'local', 'up'), 'utf8')).to.equal('hello');
      expect(await readlink(path.join(dest.dataDir, 'a'))).to.equal('b/../b/f');
    });
  });

  describe('finding 2: no privileges travel', () => {
    it('strips setuid/setgid, reports it, and never keeps root as owner', async () => {
      const dest = await newAllocDir();
      const res = await restoreSnapshot(
        streamOf(
          tarOf([
            { path: 'alloc/data/su', body: '#!/bin/sh\nid -u\n', mode: 0o4755 },
            { path: 'alloc/data/sg', body: 'x', mode: 0o2711 },
            { path: 'alloc/data/d', type: 'Directory', mode: 0o3775 },
            { path: 'alloc/data/plain', body: 'x', mode: 0o640 },
          ]),
        ),
        dest,
        { prevAllocId: 'p' },
      );
      expect((await stat(path.join(dest.dataDir, 'su'))).mode & 0o7777).to.equal(0o755);
      expect((await stat(path.join(dest.dataDir, 'sg'))).mode & 0o7777).to.equal(0o711);
      expect((await stat(path.join(dest.dataDir, 'd'))).mode & 0o7777).to.equal(0o1775);
      expect((await stat(path.join(dest.dataDir, 'plain'))).mode & 0o7777).to.equal(0o640);
      expect(res.setuidStripped).to.deep.equal(['alloc/data/su', 'alloc/data/sg', 'alloc/data/d']);
    });

    it('gives the stripped files to nobody, never to root (root)', async function () {
      needRoot(this);
      const dest = await newAllocDir();
      await restoreSnapshot(
        streamOf(
          tarOf([
            { path: 'alloc/data/su', body: '#!/bin/sh\nid -u\n', mode: 0o4755 },
            { path: 'alloc/data/sg', body: 'x', mode: 0o2711 },
            { path: 'alloc/data/d', type: 'Directory', mode: 0o3775 },
            { path: 'alloc/data/plain', body: 'x', mode: 0o640 },
          ]),
        ),
        dest,
        { prevAllocId: 'p' },
      );
      for (const f of ['su', 'sg', 'd', 'plain']) expect((await stat(path.join(dest.dataDir, f))).uid, f).to.equal(65534);
    });
  });

  describe('owners are mapped, never kept', () => {
    it("a task's local/ goes to the task's user, alloc/data to nobody, and root is never used (root)", async function () {
      needRoot(this);
      const dest = await newAllocDir();
      await restoreSnapshot(
        streamOf(
          tarOf([
            { path: 'web/local/f', body: 'w' },
            { path: 'web/local/sub/g', body: 'g' },
            { path: 'api/local/h', body: 'a' },
            { path: 'alloc/data/x', body: 'x' },
          ]),
        ),
        dest,
        { prevAllocId: 'p', taskOwners: { web: { uid: 1234, gid: 2345 }, api: { uid: 0, gid: 0 } } },
      );
      const own = async (rel: string) => {
        const st = await stat(path.join(dest.dir, rel));
        return `${st.uid}:${st.gid}`;
      };
      expect(await own('web/local/f')).to.equal('1234:2345');
      expect(await own('web/local/sub')).to.equal('1234:2345');
      expect(await own('api/local/h')).to.equal('65534:65534');
      expect(await own('alloc/data/x')).to.equal('65534:65534');
    });
  });

  describe('finding 3: bounded, and compressed only when declared', () => {
    const bomb = () => gzipSync(tarOf([{ path: 'alloc/data/big', body: Buffer.alloc(8 * 1024 * 1024) }]));

    it('refuses a gzip body that was not declared (no silent gunzip)', async () => {
      const err = await refused(bomb());
      expect(err).to.be.instanceOf(SnapshotStreamError);
      expect((err as Error).message).to.match(/compressed but was not declared/);
    });

    it('stops a declared gzip body at maxBytes with SnapshotLimitError', async () => {
      const body = bomb();
      expect(body.length).to.be.lessThan(64 * 1024);
      const err = await refused(body, undefined, { gzip: true, maxBytes: 1024 * 1024 });
      expect(err).to.be.instanceOf(SnapshotLimitError);
      expect((err as SnapshotLimitError).limit).to.equal('bytes');
    });

    it('restores a declared gzip body within the bound', async () => {
      const dest = await newAllocDir();
      const res = await restoreSnapshot(streamOf(gzipSync(tarOf([{ path: 'alloc/data/f', body: 'zipped' }]))), dest, {
        prevAllocId: 'p',
        gzip: true,
        maxBytes: 100,
      });
      expect(res.bytes).to.equal(6);
      expect(await readFile(path.join(dest.dataDir, 'f'), 'utf8')).to.equal('zipped');
    });

    it('bounds the number of entries', async () => {
      const entries: TarEntry[] = Array.from({ length: 20 }, (_, i) => ({ path: `alloc/data/f${i}`, body: 'x' }));
      const dest = await newAllocDir();
      let e2: unknown;
      await restoreSnapshot(streamOf(tarOf(entries)), dest, { prevAllocId: 'p', maxEntries: 10 }).catch((e) => (e2 = e));
      expect(e2).to.be.instanceOf(SnapshotLimitError);
      expect(await readdir(dest.dataDir)).to.deep.equal([]);
    });
  });

  describe('finding 4: a failed restore leaves dest byte-for-byte as before', () => {
    const prep = async (ad: AllocDir) => {
      await writeFile(path.join(ad.dataDir, 'keep'), 'old contents');
      await writeFile(path.join(ad.logsDir, 'web.stdout.0'), 'log line');
    };

    it('an overwritten file is back after a late escape', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/keep', body: 'NEW' },
          { path: 'alloc/data/added', body: 'x' },
          { path: 'alloc/data/zz', type: 'SymbolicLink', linkpath: '../../../outside' },
        ]),
        prep,
      );
      expect(err).to.be.instanceOf(SnapshotEscapeError);
    });

    const replacesLogs = tarOf([
      { path: 'alloc', type: 'Directory', mode: 0o700 },
      { path: 'alloc/data/x', body: 'x' },
      { path: 'alloc/logs', body: 'not a dir any more' },
    ]);

    it('alloc/logs cannot be replaced', async () => {
      const err = await refused(replacesLogs, prep);
      expect(err).to.be.instanceOf(SnapshotStreamError);
      expect((err as Error).message).to.match(/not under alloc\/data or a task's local/);
    });

    it('alloc/ keeps its owner when an archive tries to replace it (root)', async function () {
      needRoot(this);
      let shared = '';
      const err = await refused(replacesLogs, async (ad) => {
        await prep(ad);
        shared = ad.sharedDir;
        await chown(ad.sharedDir, 65534, 65534);
      });
      expect(err).to.be.instanceOf(SnapshotStreamError);
      expect((await stat(shared)).uid).to.equal(65534);
    });

    it('a merge into a populated dest replaces files and keeps the rest on success', async () => {
      const dest = await newAllocDir();
      await prep(dest);
      await writeFile(path.join(dest.dataDir, 'other'), 'untouched');
      await restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/keep', body: 'NEW' }])), dest, { prevAllocId: 'p' });
      expect(await readFile(path.join(dest.dataDir, 'keep'), 'utf8')).to.equal('NEW');
      expect(await readFile(path.join(dest.dataDir, 'other'), 'utf8')).to.equal('untouched');
      expect((await readdir(dest.dir)).filter((x) => x.startsWith('.restore-'))).to.deep.equal([]);
    });
  });

  describe('finding 5: typed errors and bounded cost', () => {
    it('a symlink loop then a dir at the same path: SnapshotStreamError, not ELOOP', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/x', type: 'SymbolicLink', linkpath: 'x' },
          { path: 'alloc/data/x', type: 'Directory' },
        ]),
      );
      expect(err).to.be.instanceOf(SnapshotStreamError);
    });

    it('a symlink loop alone: a typed error', async () => {
      const err = await refused(
        tarOf([
          { path: 'alloc/data/x', type: 'SymbolicLink', linkpath: 'y' },
          { path: 'alloc/data/y', type: 'SymbolicLink', linkpath: 'x' },
        ]),
      );
      expect(err).to.be.instanceOf(SnapshotStreamError);
      expect((err as Error).message).to.match(/too many levels/);
    });

    const long = [
      { name: 'a 300-byte name component', tar: () => paxEntry(`alloc/data/${'n'.repeat(300)}`, { body: 'x' }) },
      { name: 'a 5000-byte path', tar: () => paxEntry(`alloc/data/${'d/'.repeat(2500)}f`, { body: 'x' }) },
      { name: 'a 5000-byte link target', tar: () => paxEntry('alloc/data/l', { type: 'SymbolicLink', linkpath: 'x/'.repeat(2500) }) },
    ];
    for (const c of long) {
      it(`${c.name}: SnapshotLimitError, not ENAMETOOLONG`, async () => {
        const err = await refused(Buffer.concat([c.tar(), Buffer.alloc(1024)]));
        expect(err).to.be.instanceOf(SnapshotLimitError);
        expect((err as SnapshotLimitError).limit).to.equal('name');
      });
    }

    it('a 1 MB pax path is refused at once', async () => {
      const t0 = process.cpuUsage();
      const err = await refused(Buffer.concat([paxEntry(`alloc/data/${'p'.repeat(1024 * 1024)}`, { body: 'x' }), Buffer.alloc(1024)]));
      const cpu = process.cpuUsage(t0);
      expect(err).to.be.instanceOf(SnapshotLimitError);
      expect((err as SnapshotLimitError).limit).to.equal('header');
      expect((cpu.user + cpu.system) / 1000).to.be.lessThan(1000); // was 3.6 s
    });
  });

  it('leaves nothing of itself in dest after a success (no staging dir)', async () => {
    const dest = await newAllocDir();
    await restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/f', body: 'x' }])), dest, { prevAllocId: 'p' });
    expect((await readdir(dest.dir)).sort()).to.deep.equal(['alloc']);
    expect((await lstat(path.join(dest.dataDir, 'f'))).isFile()).to.equal(true);
  });
});
