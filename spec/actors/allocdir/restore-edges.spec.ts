/**
 * restoreSnapshot at its edges, each refusal with the exact error a user (or the peer's operator)
 * reads, and dest left as it was: entries outside the snapshot's roots, conflicting entries, the
 * bounds at and one past their limits, the remote error entry, undeclared compression of either
 * kind, input split at every byte, and the modes and result it reports on success.
 */
import { expect } from 'chai';
import { chmod, lstat, mkdir, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { AllocDir, RwLock, SnapshotStreamError, restoreSnapshot, type RestoreSnapshotOptions } from '../../../actors/allocdir/index.ts';
import { BerthError, SnapshotEscapeError, SnapshotLimitError, SnapshotRemoteError } from '../../../model/errors.ts';
import { streamOf, tarOf, tempDirs, type TarEntry } from './helpers.ts';
import { fingerprint } from './tree.ts';

const ID = 'dest-alloc';

/** One file entry with a pax header, so its name may pass ustar's 100 bytes; then the end blocks. */
function longNamed(p: string): Buffer {
  const body = Buffer.from('x');
  const mtime = new Date();
  const h = new Header({ path: p, type: 'File', mode: 0o644, size: 1, mtime, uid: 0, gid: 0 });
  h.encode();
  return Buffer.concat([new Pax({ path: p, mtime, size: 1 }).encode(), h.block!, body, Buffer.alloc(511), Buffer.alloc(1024)]);
}

describe('restoreSnapshot: edges and exact refusals', () => {
  const tmp = tempDirs();
  let dest: AllocDir;
  beforeEach(async () => {
    dest = new AllocDir(await tmp.make('berth-edges-'), ID);
    dest.newTaskDir('web');
    await dest.build();
    await dest.taskDir('web')!.build();
  });
  afterEach(async () => {
    await dest.destroy().catch(() => undefined);
    await tmp.cleanup();
  });

  const restore = (input: Buffer | Readable, opts: Partial<RestoreSnapshotOptions> = {}) =>
    restoreSnapshot(Buffer.isBuffer(input) ? streamOf(input) : input, dest, { prevAllocId: 'p', ...opts });
  /** Restores, expects a refusal of `cls` with `message`, and dest byte-for-byte as before, no staging left. */
  const refused = async (
    input: Buffer | Readable,
    cls: new (...a: never[]) => BerthError,
    message: string | RegExp,
    opts: Partial<RestoreSnapshotOptions> = {},
  ) => {
    const before = await fingerprint(dest.dir);
    let err: unknown;
    await restore(input, opts).catch((e) => (err = e));
    expect(err, String(message)).to.be.instanceOf(cls);
    if (typeof message === 'string') expect((err as Error).message).to.equal(message);
    else expect((err as Error).message).to.match(message);
    expect(await fingerprint(dest.dir), 'dest unchanged').to.deep.equal(before);
    return err as BerthError;
  };
  const streamErr = (detail: string) => `error streaming previous alloc "p" for new alloc "${ID}": ${detail}`;
  const data = (...entries: TarEntry[]) => tarOf([{ path: 'alloc/data', type: 'Directory' }, ...entries]);

  it("refuses entries outside alloc/data and the tasks' local/, and roots that are not dirs", async () => {
    const notUnder = (rel: string) => streamErr(`archive entry ${JSON.stringify(rel)} is not under alloc/data or a task's local/`);
    for (const [entries, message] of [
      [[{ path: 'web/secrets/token', body: 'x' }], notUnder('web/secrets/token')],
      [[{ path: 'alloc/logs/web.stdout.0', body: 'x' }], notUnder('alloc/logs/web.stdout.0')],
      [[{ path: 'alloc/tmp', type: 'Directory' }], notUnder('alloc/tmp')],
      [[{ path: 'alloc', body: 'a file' }], notUnder('alloc')],
      [[{ path: 'a\\b/local/x', body: 'x' }], notUnder('a\\b/local/x')],
      [[{ path: 'alloc/data', body: 'a file' }], streamErr('archive entry "alloc/data" must be a directory')],
      [[{ path: 'web/local', type: 'SymbolicLink', linkpath: 'tmp' }], streamErr('archive entry "web/local" must be a directory')],
    ] as Array<[TarEntry[], string]>)
      await refused(tarOf([{ path: 'alloc/data/ok', body: 'fine' }, ...entries]), SnapshotStreamError, message);
    // The alloc and task dirs themselves (and "." entries) are skipped, not refused.
    const r = await restore(
      tarOf([
        { path: './', type: 'Directory' },
        { path: 'alloc', type: 'Directory' },
        { path: 'web/', type: 'Directory' },
        { path: 'web/local/', type: 'Directory' },
        { path: 'web/local/conf', body: 'c' },
      ]),
    );
    expect(r.entries).to.equal(5);
    expect(await readFile(path.join(dest.dir, 'web', 'local', 'conf'), 'utf8')).to.equal('c');
  });

  it('refuses entries that contradict each other, naming both', async () => {
    await refused(
      data({ path: 'alloc/data/x', type: 'Directory' }, { path: 'alloc/data/x', body: 'f' }),
      SnapshotStreamError,
      streamErr('alloc/data/x: a directory in the archive is replaced by a file'),
    );
    await refused(
      data({ path: 'alloc/data/x', type: 'Directory' }, { path: 'alloc/data/x', type: 'SymbolicLink', linkpath: 'y' }),
      SnapshotStreamError,
      streamErr('alloc/data/x: a directory in the archive is replaced by a link'),
    );
    await refused(
      data({ path: 'alloc/data/x', body: 'f' }, { path: 'alloc/data/x', type: 'Directory' }),
      SnapshotStreamError,
      streamErr('alloc/data/x: a file in the archive is replaced by a directory'),
    );
    await refused(
      data({ path: 'alloc/data/x', type: 'SymbolicLink', linkpath: 'y' }, { path: 'alloc/data/x', type: 'Directory' }),
      SnapshotStreamError,
      streamErr('alloc/data/x: a link in the archive is replaced by a directory'),
    );
    await refused(
      data({ path: 'alloc/data/f', body: 'f' }, { path: 'alloc/data/f/g', body: 'g' }),
      SnapshotStreamError,
      streamErr('alloc/data/f/g: parent alloc/data/f is a file'),
    );
    await refused(
      data({ path: 'alloc/data/l', type: 'SymbolicLink', linkpath: 'd' }, { path: 'alloc/data/l/g', body: 'g' }),
      SnapshotEscapeError,
      'archive contains object that escapes alloc dir',
    );
  });

  it('a link whose text leaves the alloc dir is refused as such at once, before an entry below it is read', async () => {
    for (const target of ['../../..', '../../../etc', '/etc', `${'x/'.repeat(3)}${'../'.repeat(6)}out`]) {
      await refused(
        data({ path: 'alloc/data/l', type: 'SymbolicLink', linkpath: target }, { path: 'alloc/data/l/x', body: 'through it' }),
        SnapshotEscapeError,
        'archive contains symlink that escapes alloc dir',
      );
    }
    // Climbing to the alloc dir itself is inside; one more step is not.
    const r = await restore(
      data({ path: 'alloc/data/up', type: 'SymbolicLink', linkpath: '../..' }, { path: 'web/local/deep', type: 'SymbolicLink', linkpath: '../../alloc/data' }),
    );
    expect(r.entries).to.equal(3);
    expect(await readlink(path.join(dest.dataDir, 'up'))).to.equal('../..');
  });

  it('a later entry for the same path wins: file over file, link over file, link over link, file over link', async () => {
    const r = await restore(
      data(
        { path: 'alloc/data/a', body: 'first' },
        { path: 'alloc/data/a', body: 'second' },
        { path: 'alloc/data/b', body: 'file' },
        { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: 'a' },
        { path: 'alloc/data/c', type: 'SymbolicLink', linkpath: 'nowhere' },
        { path: 'alloc/data/c', type: 'SymbolicLink', linkpath: 'a' },
        { path: 'alloc/data/d', type: 'SymbolicLink', linkpath: 'a' },
        { path: 'alloc/data/d', body: 'plain' },
      ),
    );
    expect(r.entries).to.equal(9);
    expect(r.bytes).to.equal('firstsecondfileplain'.length);
    expect(await readFile(path.join(dest.dataDir, 'a'), 'utf8')).to.equal('second');
    expect(await readlink(path.join(dest.dataDir, 'b'))).to.equal('a');
    expect(await readlink(path.join(dest.dataDir, 'c'))).to.equal('a');
    expect((await lstat(path.join(dest.dataDir, 'd'))).isFile()).to.equal(true);
    expect(await readFile(path.join(dest.dataDir, 'd'), 'utf8')).to.equal('plain');
  });

  it('bounds at their limit pass; one past is a SnapshotLimitError naming the limit', async () => {
    const three = data({ path: 'alloc/data/a', body: 'aa' }, { path: 'alloc/data/b', body: 'bbb' });
    expect((await restore(three, { maxEntries: 3, maxBytes: 5 })).bytes).to.equal(5);
    await rm(path.join(dest.dataDir, 'a'));
    await rm(path.join(dest.dataDir, 'b'));
    const e1 = await refused(three, SnapshotLimitError, 'archive has more than 2 entries', { maxEntries: 2 });
    expect((e1 as SnapshotLimitError).limit).to.equal('entries');
    const e2 = await refused(three, SnapshotLimitError, 'snapshot exceeds 4 bytes (the ephemeral disk size) at alloc/data/b', { maxBytes: 4 });
    expect((e2 as SnapshotLimitError).limit).to.equal('bytes');
    // Names: a 255-byte component passes, 256 does not; a 4095-byte link target passes the text bound.
    const ok = `alloc/data/${'n'.repeat(255)}`;
    expect((await restore(longNamed(ok))).entries).to.equal(1);
    expect(await readFile(path.join(dest.dir, ok), 'utf8')).to.equal('x');
    await rm(path.join(dest.dir, ok));
    const e3 = await refused(longNamed(`alloc/data/${'n'.repeat(256)}`), SnapshotLimitError, 'archive entry name has a component of 256 bytes (limit 255)');
    expect((e3 as SnapshotLimitError).limit).to.equal('name');
    await refused(longNamed(`alloc/data/${'é'.repeat(128)}`), SnapshotLimitError, 'archive entry name has a component of 256 bytes (limit 255)');
    // A whole name past PATH_MAX, counted in bytes.
    const e4 = await refused(longNamed(`alloc/data/${'d/'.repeat(2042)}f`), SnapshotLimitError, 'archive entry name of 4096 bytes exceeds 4095');
    expect((e4 as SnapshotLimitError).limit).to.equal('name');
  });

  it('an empty input is a stream error, not an empty restore', async () => {
    await refused(Buffer.alloc(0), SnapshotStreamError, streamErr('TAR_BAD_ARCHIVE: Unrecognized archive format'));
  });

  it("the peer's error entry is a SnapshotRemoteError carrying its text; only for this previous alloc", async () => {
    const err = await refused(
      data({ path: 'alloc/data/a', body: 'x' }, { path: 'NOMAD-p-ERROR.log', body: 'disk on fire\n' }),
      SnapshotRemoteError,
      streamErr('disk on fire\n'),
    );
    expect((err as SnapshotRemoteError).remoteMessage).to.equal('disk on fire\n');
    // Another alloc's error log is just a file outside the roots.
    await refused(
      data({ path: 'NOMAD-q-ERROR.log', body: 'x' }),
      SnapshotStreamError,
      streamErr('archive entry "NOMAD-q-ERROR.log" is not under alloc/data or a task\'s local/'),
    );
  });

  it('undeclared compression of either kind is refused, declared gzip of gzip too; a short input is a stream error', async () => {
    const tar = data({ path: 'alloc/data/a', body: 'x' });
    await refused(gzipSync(tar), SnapshotStreamError, streamErr('snapshot is compressed but was not declared so (Content-Encoding)'));
    const zstd = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), tar]);
    await refused(zstd, SnapshotStreamError, streamErr('snapshot is compressed but was not declared so (Content-Encoding)'));
    await refused(gzipSync(gzipSync(tar)), SnapshotStreamError, streamErr('snapshot is compressed twice'), { gzip: true });
    // Bytes that only start like a magic number are a tar like any other.
    for (const lead of [
      [0x1f, 0x00],
      [0x28, 0xb5, 0x2f, 0x00],
      [0x28, 0x00],
    ]) {
      const odd = Buffer.from(tar);
      Buffer.from(lead).copy(odd, 0);
      const err = await restore(odd).catch((e: Error) => e);
      expect((err as Error).message ?? '', lead.join(',')).to.not.match(/compressed/);
    }
    const gzErr = await refused(
      Buffer.from('not gzip at all'),
      SnapshotStreamError,
      /^error streaming previous alloc "p" for new alloc "dest-alloc": bad gzip body: /,
      { gzip: true },
    );
    expect(gzErr).to.be.instanceOf(SnapshotStreamError);
    await refused(Buffer.from([0x1f]), SnapshotStreamError, /^error streaming previous alloc "p"/);
  });

  it('input split at every byte restores the same tree (the compression sniff waits for four bytes)', async () => {
    const tar = data({ path: 'alloc/data/a', body: 'hello' }, { path: 'web/local/l', type: 'SymbolicLink', linkpath: 'x' });
    const bytes: Buffer[] = [...tar].map((b) => Buffer.from([b]));
    const r = await restore(Readable.from(bytes.slice(0, 600).concat([tar.subarray(600)])));
    expect(r).to.deep.include({ entries: 3, bytes: 5, setuidStripped: [] });
    expect(await readFile(path.join(dest.dataDir, 'a'), 'utf8')).to.equal('hello');
    expect(await readlink(path.join(dest.dir, 'web', 'local', 'l'))).to.equal('x');
  });

  it('modes: kept without setuid/setgid (listed), a dir keeps its sticky bit, a file does not; defaults when the archive has none', async () => {
    const r = await restore(
      data(
        { path: 'alloc/data/f640', body: 'x', mode: 0o640 },
        { path: 'alloc/data/suid', body: 'x', mode: 0o4755 },
        { path: 'alloc/data/sgid', body: 'x', mode: 0o2711 },
        { path: 'alloc/data/sticky', body: 'x', mode: 0o1644 },
        { path: 'alloc/data/f600', body: 'x', mode: 0o600 },
        { path: 'alloc/data/d750', type: 'Directory', mode: 0o750 },
        { path: 'alloc/data/dsticky', type: 'Directory', mode: 0o3777 },
        { path: 'alloc/data/d750/inner', body: 'in', mode: 0o444 },
      ),
    );
    const mode = async (rel: string) => ((await lstat(path.join(dest.dataDir, rel))).mode & 0o7777).toString(8);
    expect(await mode('f640')).to.equal('640');
    expect(await mode('suid')).to.equal('755');
    expect(await mode('sgid')).to.equal('711');
    expect(await mode('sticky')).to.equal('644');
    expect(await mode('f600')).to.equal('600');
    expect(await mode('d750/inner')).to.equal('444');
    expect(r.setuidStripped).to.deep.equal(['alloc/data/suid', 'alloc/data/sgid', 'alloc/data/dsticky']);
    // As root dirs get exactly their modes; a non-root restore keeps rwx for itself.
    const own = process.geteuid?.() === 0 ? 0 : 0o700;
    expect(await mode('d750')).to.equal((0o750 | own).toString(8));
    expect(await mode('dsticky')).to.equal((0o1777 | own).toString(8));
    // A parent made only because a file is below it gets 0755.
    await restore(tarOf([{ path: 'alloc/data/implied/deeper/f', body: 'x' }]));
    expect(await mode('implied')).to.equal((0o755 | own).toString(8));
    expect(await mode('implied/deeper')).to.equal((0o755 | own).toString(8));
  });

  it('merging into dest: a task dir dest lacks is made; a top that is a file or a link is refused; merged dirs keep their modes', async () => {
    await chmod(dest.dataDir, 0o751);
    const r = await restore(
      tarOf([
        { path: 'db/local/x', body: 'new task' },
        { path: 'alloc/data/y', body: 'y' },
      ]),
    );
    expect(r.entries).to.equal(2);
    expect(await readFile(path.join(dest.dir, 'db', 'local', 'x'), 'utf8')).to.equal('new task');
    expect(((await lstat(path.join(dest.dir, 'db'))).mode & 0o777).toString(8)).to.equal('777');
    expect(((await lstat(dest.dataDir)).mode & 0o777).toString(8), 'a dir merged into keeps its mode').to.equal('751');
    await rm(path.join(dest.dir, 'db'), { recursive: true });
    await writeFile(path.join(dest.dir, 'db'), 'a file where a task dir would go');
    await refused(tarOf([{ path: 'db/local/x', body: 'x' }]), SnapshotStreamError, streamErr(`db exists in ${dest.dir} and is not a directory`));
    await rm(path.join(dest.dir, 'db'));
    await mkdir(path.join(dest.dir, 'elsewhere'));
    await symlink('elsewhere', path.join(dest.dir, 'db'));
    await refused(tarOf([{ path: 'db/local/x', body: 'x' }]), SnapshotEscapeError, 'archive contains object that escapes alloc dir');
    expect(await readdir(path.join(dest.dir, 'elsewhere'))).to.deep.equal([]);
  });

  it('hard links, fifos and the like are read past, counted, and never made', async () => {
    const r = await restore(
      data({ path: 'alloc/data/a', body: 'x' }, { path: 'alloc/data/h', type: 'Link', linkpath: 'alloc/data/a' }, { path: 'alloc/data/p', type: 'FIFO' }),
    );
    expect(r.entries).to.equal(4);
    expect((await readdir(dest.dataDir)).sort()).to.deep.equal(['a']);
  });

  it('bytes that only partly match a magic number are a tar like any other, at every position of both magics', async () => {
    const tar = data({ path: 'alloc/data/a', body: 'x' });
    // Each lead matches all but one byte of gzip's (1f 8b) or zstd's (28 b5 2f fd) magic.
    for (const lead of [
      [0x00, 0x8b],
      [0x00, 0x00, 0x00, 0xfd],
      [0x00, 0x00, 0x2f, 0xfd],
      [0x00, 0xb5, 0x2f, 0xfd],
      [0x28, 0x00, 0x2f, 0xfd],
      [0x28, 0xb5, 0x00, 0xfd],
    ]) {
      const odd = Buffer.from(tar);
      Buffer.from(lead).copy(odd, 0);
      await refused(odd, SnapshotStreamError, /^error streaming previous alloc "p" for new alloc "dest-alloc": TAR_/);
    }
  });

  it('the sniff sees four bytes even when they come one at a time, and an input of exactly a magic number', async () => {
    const gz = gzipSync(data({ path: 'alloc/data/a', body: 'x' }));
    await refused(
      Readable.from([...gz].map((b) => Buffer.from([b]))),
      SnapshotStreamError,
      streamErr('snapshot is compressed but was not declared so (Content-Encoding)'),
    );
    await refused(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), SnapshotStreamError, streamErr('snapshot is compressed but was not declared so (Content-Encoding)'));
  });

  it('an input that delivers text (an encoding set on it) restores the same bytes', async () => {
    const tar = data({ path: 'alloc/data/t', body: 'plain ascii' });
    const text = new PassThrough();
    text.setEncoding('latin1');
    text.end(tar);
    const r = await restore(text);
    expect(r.bytes).to.equal(11);
    expect(await readFile(path.join(dest.dataDir, 't'), 'utf8')).to.equal('plain ascii');
  });

  it('stream errors carry their cause, and an artifact names itself in them', async () => {
    const err = await refused(Buffer.from('abc'), SnapshotStreamError, /TAR_/);
    expect((err as Error).cause).to.be.instanceOf(Error);
    const task = dest.taskDir('web')!.dir;
    const art = { dir: task, allocId: ID, built: true, lock: new RwLock() };
    const aerr = (await restoreSnapshot(streamOf(Buffer.from('abc')), art, { prevAllocId: '', artifact: { under: 'local', label: 'https://x/y.tar' } }).catch(
      (e: Error) => e,
    )) as Error;
    expect(aerr).to.be.instanceOf(SnapshotStreamError);
    expect(aerr.message).to.match(/^error unpacking artifact https:\/\/x\/y\.tar: TAR_/);
    expect(aerr.cause).to.be.instanceOf(Error);
  });
});
