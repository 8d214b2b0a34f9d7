import { expect } from 'chai';
import { chmod, chown, lstat, mkdir, readFile, readdir, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';
import { AllocDirNotBuiltError, SnapshotEscapeError, SnapshotRemoteError } from '../../../model/errors.ts';
import type { Task } from '../../../model/types.ts';
import { AllocDir, SNAPSHOT_ERROR_TIME, restoreSnapshot, snapshotErrorFilename } from '../../../actors/allocdir/index.ts';
import { collect, entryBlocks, errCode, needRoot, streamOf, tarOf, tempDirs, type TarEntry } from './helpers.ts';

const task = (name: string): Task => ({ name, driver: 'mock', config: {} });

interface Listed {
  path: string;
  type: string;
  mode?: number;
  body: string;
  linkpath?: string;
  mtime?: Date;
}

/** Parses a tar buffer into its entries. */
async function list(buf: Buffer): Promise<Listed[]> {
  const out: Listed[] = [];
  const p = new Parser();
  p.on('entry', (e: ReadEntry) => {
    const item: Listed = { path: e.path, type: e.type, mode: e.mode, body: '', linkpath: e.linkpath, mtime: e.mtime };
    out.push(item);
    e.on('data', (c: Buffer) => (item.body += c.toString()));
  });
  await new Promise<void>((resolve) => p.end(buf, resolve));
  return out;
}

/** Everything under `dir`, relative, sorted. */
async function tree(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(path.join(dir, rel))).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    out.push(r);
    const st = await lstat(path.join(dir, r));
    if (st.isDirectory()) out.push(...(await tree(dir, r)));
  }
  return out;
}

describe('AllocDir snapshot / restoreSnapshot', () => {
  const tmp = tempDirs();
  const dirs: AllocDir[] = [];
  let client: string;
  let n = 0;
  const newAllocDir = async (tasks: string[] = []) => {
    const ad = new AllocDir(client, `alloc-${++n}`);
    dirs.push(ad);
    for (const t of tasks) ad.newTaskDir(t);
    await ad.build();
    for (const t of ad.tasks()) await t.build();
    return ad;
  };
  before(async () => {
    client = await tmp.make('berth-snap-');
  });
  afterEach(async () => {
    for (const ad of dirs.splice(0)) await ad.destroy().catch(() => undefined);
  });
  after(() => tmp.cleanup());

  async function populated() {
    const src = await newAllocDir(['web']);
    await writeFile(path.join(src.dataDir, 'db'), 'rows');
    await chmod(path.join(src.dataDir, 'db'), 0o600);
    await mkdir(path.join(src.dataDir, 'sub'), { mode: 0o750 });
    await chmod(path.join(src.dataDir, 'sub'), 0o750);
    await writeFile(path.join(src.dataDir, 'sub', 'run.sh'), '#!/bin/sh');
    await chmod(path.join(src.dataDir, 'sub', 'run.sh'), 0o755);
    await symlink('sub/run.sh', path.join(src.dataDir, 'link'));
    const long = path.join(src.dataDir, 'a'.repeat(60), 'b'.repeat(60));
    await mkdir(long, { recursive: true });
    await writeFile(path.join(long, 'c'.repeat(40)), 'deep');
    await writeFile(path.join(src.taskDir('web')!.localDir, 'cfg'), 'conf');
    await writeFile(path.join(src.logsDir, 'web.stdout.0'), 'not migrated');
    return src;
  }

  it('writes alloc/data then each task local/, names relative to the alloc dir', async () => {
    const src = await populated();
    const { stream, done } = collect();
    await src.snapshot(stream);
    const entries = await list(await done);
    const names = entries.map((e) => e.path);
    expect(names[0]).to.equal('alloc/data');
    expect(names).to.include.members(['alloc/data/db', 'alloc/data/sub', 'alloc/data/sub/run.sh', 'alloc/data/link', 'web/local', 'web/local/cfg']);
    expect(names.indexOf('web/local')).to.be.greaterThan(names.indexOf('alloc/data/sub/run.sh'));
    expect(names.some((x) => x.includes('logs'))).to.equal(false);
    const link = entries.find((e) => e.path === 'alloc/data/link')!;
    expect(link).to.include({ type: 'SymbolicLink', linkpath: 'sub/run.sh' });
    expect(entries.find((e) => e.path === 'alloc/data/db')).to.include({ mode: 0o600, body: 'rows' });
    expect(names.find((x) => x.endsWith('c'.repeat(40)))!.length).to.be.greaterThan(100); // pax path
  });

  it('round-trips into another built alloc dir, modes and owners preserved', async () => {
    const src = await populated();
    const dest = await newAllocDir(['web']);
    const pipe = new PassThrough();
    await Promise.all([src.snapshot(pipe), restoreSnapshot(pipe, dest, { prevAllocId: src.allocId })]);
    expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows');
    expect((await stat(path.join(dest.dataDir, 'db'))).mode & 0o7777).to.equal(0o600);
    expect((await stat(path.join(dest.dataDir, 'sub'))).mode & 0o7777).to.equal(0o750);
    expect((await stat(path.join(dest.dataDir, 'sub', 'run.sh'))).mode & 0o7777).to.equal(0o755);
    expect(await readlink(path.join(dest.dataDir, 'link'))).to.equal('sub/run.sh');
    expect(await readFile(path.join(dest.dataDir, 'a'.repeat(60), 'b'.repeat(60), 'c'.repeat(40)), 'utf8')).to.equal('deep');
    expect(await readFile(path.join(dest.dir, 'web', 'local', 'cfg'), 'utf8')).to.equal('conf');
    expect(await readdir(dest.logsDir)).to.deep.equal([]);
  });

  it("round-trips a data file's owner (root)", async function () {
    needRoot(this);
    const src = await populated();
    await chown(path.join(src.dataDir, 'db'), 65534, 65534);
    const dest = await newAllocDir(['web']);
    const pipe = new PassThrough();
    await Promise.all([src.snapshot(pipe), restoreSnapshot(pipe, dest, { prevAllocId: src.allocId })]);
    expect((await stat(path.join(dest.dataDir, 'db'))).uid).to.equal(65534);
  });

  it('on a walk error appends NOMAD-<id>-ERROR.log, ends the stream, then rejects', async () => {
    const src = await populated();
    src.newTaskDir('ghost'); // registered, never built: its local/ does not exist
    const { stream, done } = collect();
    let err: unknown;
    await src.snapshot(stream).catch((e) => (err = e));
    expect((err as Error).message).to.match(/^failed to snapshot ghost\/local: /);
    const entries = await list(await done); // ended
    const last = entries[entries.length - 1];
    expect(last.path).to.equal(snapshotErrorFilename(src.allocId));
    expect(last.mode).to.equal(0o666);
    expect(last.body).to.match(/^Error snapshotting: .*ENOENT/);
    expect(last.mtime!.toISOString()).to.equal(SNAPSHOT_ERROR_TIME.toISOString());
    expect(SNAPSHOT_ERROR_TIME.toISOString()).to.equal('1999-11-30T00:00:00.000Z');

    // The receiving side turns it into a SnapshotRemoteError and keeps nothing it wrote.
    const dest = await newAllocDir();
    const before = await tree(dest.dir);
    err = undefined;
    await restoreSnapshot(streamOf(await done), dest, { prevAllocId: src.allocId }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(SnapshotRemoteError);
    expect((err as SnapshotRemoteError).remoteMessage).to.equal(last.body);
    expect((err as Error).message).to.equal(`error streaming previous alloc "${src.allocId}" for new alloc "${dest.allocId}": ${last.body}`);
    expect(await tree(dest.dir)).to.deep.equal(before);
  });

  it('restoreSnapshot needs a built destination', async () => {
    const dest = new AllocDir(client, 'never-built');
    let err: unknown;
    await restoreSnapshot(streamOf(tarOf([])), dest, { prevAllocId: 'x' }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(AllocDirNotBuiltError);
  });

  it('ignores hard links and fifos', async () => {
    const dest = await newAllocDir();
    const tar = tarOf([
      { path: 'alloc/data/f', body: 'x' },
      { path: 'alloc/data/hard', type: 'Link', linkpath: '/etc/passwd' },
      { path: 'alloc/data/fifo', type: 'FIFO' },
    ]);
    await restoreSnapshot(streamOf(tar), dest, { prevAllocId: 'p' });
    expect(await readdir(dest.dataDir)).to.deep.equal(['f']);
  });

  describe('refuses escapes, writes nothing outside, leaves nothing behind', () => {
    let outside: string;
    beforeEach(async () => {
      outside = await tmp.make('berth-outside-');
      await writeFile(path.join(outside, 'victim'), 'original');
    });

    const cases: Array<{ name: string; entries: (o: string) => TarEntry[]; msg: RegExp }> = [
      { name: 'a ../ path', entries: (o) => [{ path: `../../${path.basename(o)}/x`, body: 'pwn' }], msg: /object that escapes/ },
      { name: 'an absolute path', entries: (o) => [{ path: path.join(o, 'x'), body: 'pwn' }], msg: /object that escapes/ },
      { name: 'an absolute /etc path', entries: () => [{ path: '/etc/berth-should-not-exist', body: 'pwn' }], msg: /object that escapes/ },
      { name: 'a symlink to /etc', entries: () => [{ path: 'alloc/data/etc', type: 'SymbolicLink', linkpath: '/etc' }], msg: /symlink that escapes/ },
      {
        name: 'a symlink with a ../.. target',
        entries: () => [{ path: 'alloc/data/up', type: 'SymbolicLink', linkpath: '../../..' }],
        msg: /symlink that escapes/,
      },
      {
        name: 'a file written through a symlink planted earlier in the stream',
        entries: () => [
          { path: 'alloc/data/l', type: 'SymbolicLink', linkpath: '../tmp' }, // inside: allowed
          { path: 'alloc/data/l/x', body: 'through the link' },
        ],
        msg: /object that escapes/,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const dest = await newAllocDir();
        const before = await tree(dest.dir);
        const entries = [{ path: 'alloc/data/ok', body: 'fine' }, { path: 'alloc/data/newdir', type: 'Directory' as const }, ...c.entries(outside)];
        let err: unknown;
        await restoreSnapshot(streamOf(tarOf(entries)), dest, { prevAllocId: 'p' }).catch((e) => (err = e));
        expect(err).to.be.instanceOf(SnapshotEscapeError);
        expect((err as Error).message).to.match(c.msg);
        expect(await tree(dest.dir)).to.deep.equal(before);
        expect(await readdir(outside)).to.deep.equal(['victim']);
        expect(errCode(await lstat('/etc/berth-should-not-exist').catch((e) => e))).to.equal('ENOENT');
      });
    }

    it('a symlink already in dest pointing outside is never written through', async () => {
      const dest = await newAllocDir();
      await symlink(outside, path.join(dest.dataDir, 'evil'));
      let err: unknown;
      await restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/evil/victim', body: 'pwn' }])), dest, { prevAllocId: 'p' }).catch((e) => (err = e));
      expect(err).to.be.instanceOf(SnapshotEscapeError);
      // A file entry AT the link's path resolves outside too: refused (as Nomad does), not followed.
      err = undefined;
      await restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/evil', body: 'pwn' }])), dest, { prevAllocId: 'p' }).catch((e) => (err = e));
      expect(err).to.be.instanceOf(SnapshotEscapeError);
      expect(await readdir(outside)).to.deep.equal(['victim']);
      expect(await readFile(path.join(outside, 'victim'), 'utf8')).to.equal('original');
    });
  });

  it('a truncated stream is an error and leaves nothing behind', async () => {
    const dest = await newAllocDir();
    const before = await tree(dest.dir);
    const full = tarOf([{ path: 'alloc/data/a', body: 'x'.repeat(2000) }], { end: false });
    let err: unknown;
    await restoreSnapshot(streamOf(full.subarray(0, 1024)), dest, { prevAllocId: 'p' }).catch((e) => (err = e));
    expect((err as Error).message).to.match(/^error streaming previous alloc "p" for new alloc/);
    expect(await tree(dest.dir)).to.deep.equal(before);
  });

  it('cancellation mid-stream rejects promptly, stops reading, and cleans up', async () => {
    const dest = await newAllocDir();
    const before = await tree(dest.dir);
    const size = 1024 * 1024 * 1024; // 1 GiB, produced lazily
    let produced = 0;
    let readsAfterAbort = 0;
    const ac = new AbortController();
    const head = Buffer.concat([
      ...entryBlocks({ path: 'alloc/data/first', body: 'ok' }),
      ...entryBlocks({ path: 'alloc/data/big', type: 'File' }).slice(0, 1),
    ]);
    // Patch the size of the big entry's header: build it by hand with the real size.
    const { Header } = await import('tar');
    const h = new Header({ path: 'alloc/data/big', type: 'File', size, mode: 0o644, mtime: new Date() });
    h.encode();
    const prefix = Buffer.concat([head.subarray(0, head.length - 512), h.block!]);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sentPrefix = false;
    const input = new Readable({
      read() {
        if (ac.signal.aborted) readsAfterAbort++;
        if (!sentPrefix) {
          sentPrefix = true;
          return void this.push(prefix);
        }
        produced += chunk.length;
        if (produced === 4 * 1024 * 1024) setImmediate(() => ac.abort(new Error('migration cancelled')));
        this.push(chunk);
      },
    });
    const t0 = Date.now();
    let err: unknown;
    await restoreSnapshot(input, dest, { prevAllocId: 'p', signal: ac.signal }).catch((e) => (err = e));
    expect((err as Error).message).to.equal('migration cancelled');
    expect(Date.now() - t0).to.be.lessThan(5000);
    expect(produced).to.be.lessThan(64 * 1024 * 1024); // it stopped consuming long before the end
    expect(readsAfterAbort).to.be.lessThan(4);
    expect(await tree(dest.dir)).to.deep.equal(before);
    input.destroy();
  });

  it('a snapshot and a move of the same dir, started together, do not corrupt each other', async () => {
    const src = await populated();
    const dest = await newAllocDir(['web']);
    const { stream, done } = collect();
    const snap = src.snapshot(stream);
    const move = dest.move(src, [task('web')]);
    await Promise.all([snap, move]);
    const names = (await list(await done)).map((e) => e.path);
    expect(names).to.include.members(['alloc/data/db', 'web/local/cfg']); // the snapshot saw it all
    expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows'); // then it moved
    expect(await readFile(path.join(dest.dir, 'web', 'local', 'cfg'), 'utf8')).to.equal('conf');
    // A snapshot after the move: the data is gone from src, the task local/ too.
    const again = collect();
    await src.snapshot(again.stream).catch(() => undefined);
    const later = (await list(await again.done)).map((e) => e.path);
    expect(later).to.include(snapshotErrorFilename(src.allocId));
  });
});
