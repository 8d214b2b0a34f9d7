/**
 * restoreSnapshot at its edges, each refusal with the exact error a user (or the peer's operator)
 * reads, and dest left as it was: entries outside the snapshot's roots, conflicting entries, the
 * bounds at and one past their limits, the remote error entry, undeclared compression of either
 * kind, input split at every byte, and the modes and result it reports on success.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { AllocDir, RwLock, SnapshotStreamError, restoreSnapshot, type RestoreSnapshotOptions } from '../../../actors/allocdir/index.ts';
import { BerthError, SnapshotEscapeError, SnapshotLimitError, SnapshotRemoteError } from '../../../model/errors.ts';
import { entryBlocks, needRoot, streamOf, tarOf, tempDirs, type TarEntry } from './helpers.ts';
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

/** A header block with its checksum made right again after an edit. */
function resummed(block: Buffer): Buffer {
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of block) sum += b;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}
/** The header block with another type flag. */
const withType = (block: Buffer, flag: string) => {
  const b = Buffer.from(block);
  b.write(flag, 156, 'latin1');
  return resummed(b);
};
/** The header block with its mode field blank (tar then gives no mode). */
const withoutMode = (block: Buffer) => resummed(Buffer.from(block).fill(0, 100, 108));

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
    // "." and empty components climb nothing: they cannot hide a step out.
    for (const target of ['../../..', '../../../etc', '/etc', `${'x/'.repeat(3)}${'../'.repeat(6)}out`, './../../../x', '..//..//..//x']) {
      await refused(
        data({ path: 'alloc/data/l', type: 'SymbolicLink', linkpath: target }, { path: 'alloc/data/l/x', body: 'through it' }),
        SnapshotEscapeError,
        'archive contains symlink that escapes alloc dir',
      );
    }
    // Climbing to the alloc dir itself is inside; one more step is not.
    const r = await restore(
      data(
        { path: 'alloc/data/up', type: 'SymbolicLink', linkpath: '../..' },
        { path: 'web/local/deep', type: 'SymbolicLink', linkpath: '../../alloc/data' },
        // Down one, then up three: the alloc dir itself.
        { path: 'alloc/data/sub', type: 'Directory' },
        { path: 'alloc/data/down-up', type: 'SymbolicLink', linkpath: 'sub/../../..' },
      ),
    );
    expect(r.entries).to.equal(5);
    expect(await readlink(path.join(dest.dataDir, 'down-up'))).to.equal('sub/../../..');
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

  it('the stream bound counts headers, padding and ignored bodies: maxBytes + 64 MiB passes, one byte more is refused', async () => {
    const MiB = 1024 * 1024;
    const limit = 512 + 64 * MiB;
    // One fifo whose (ignored) body fills the stream to the bound with its header and the end blocks.
    const size = limit - 512 - 1024;
    const input = (extra: number) => {
      const h = new Header({ path: 'alloc/data/p', type: 'FIFO', mode: 0o644, size, mtime: new Date(), uid: 0, gid: 0 });
      h.encode();
      return Readable.from(
        (function* () {
          yield h.block!;
          const zero = Buffer.alloc(MiB);
          for (let left = size; left > 0; left -= MiB) yield zero.subarray(0, Math.min(left, MiB));
          yield Buffer.alloc(1024 + extra);
        })(),
      );
    };
    expect(await restore(input(0), { maxBytes: 512 })).to.deep.include({ entries: 1, bytes: 0 });
    const err = await refused(input(1), SnapshotLimitError, `snapshot stream exceeds ${limit} bytes (headers and padding included)`, { maxBytes: 512 });
    expect((err as SnapshotLimitError).limit).to.equal('bytes');
  });

  it('an already aborted signal rejects with its reason without reading the input', async () => {
    const ac = new AbortController();
    ac.abort(new Error('gone before it began'));
    let reads = 0;
    const input = new Readable({
      read() {
        reads++;
        this.push(null);
      },
    });
    await refused(input, Error, 'gone before it began', { signal: ac.signal });
    expect(reads).to.equal(0);
  });

  it('an input that fails part way, plain or declared gzip, is a stream error naming why; one closed before the restore began too', async () => {
    const tar = data({ path: 'alloc/data/a', body: 'x'.repeat(5000) });
    for (const [first, gzip] of [
      [tar.subarray(0, 700), false],
      [gzipSync(tar).subarray(0, 20), true],
    ] as Array<[Buffer, boolean]>) {
      let n = 0;
      const input = new Readable({
        read() {
          if (n++ === 0) this.push(first);
          else this.destroy(new Error('peer reset'));
        },
      });
      const err = await refused(input, SnapshotStreamError, streamErr('peer reset'), { gzip });
      expect((err as Error).cause).to.have.property('message', 'peer reset');
    }
    const gone = new PassThrough();
    gone.destroy();
    await refused(gone, SnapshotStreamError, streamErr('the input closed before the restore began'));
  });

  it('leaves no listener of its own on the input or the signal; a refused input is paused and unpiped, still its owner’s', async () => {
    const ac = new AbortController();
    const ok = streamOf(data({ path: 'alloc/data/a', body: 'x' }));
    await restore(ok, { signal: ac.signal });
    for (const ev of ['data', 'end', 'error']) expect(ok.listenerCount(ev), ev).to.equal(0);
    expect(getEventListeners(ac.signal, 'abort')).to.have.length(0);
    const bad = data({ path: 'alloc/data/l', type: 'SymbolicLink', linkpath: '/etc' });
    for (const gzip of [false, true]) {
      const open = new PassThrough();
      open.write(gzip ? gzipSync(bad) : bad); // not ended: the caller still owns it
      await refused(open, SnapshotEscapeError, 'archive contains symlink that escapes alloc dir', { gzip, signal: ac.signal });
      for (const ev of ['data', 'end', 'error']) expect(open.listenerCount(ev), `${ev} (gzip: ${gzip})`).to.equal(0);
      expect(open.isPaused(), `paused (gzip: ${gzip})`).to.equal(true);
      expect(getEventListeners(ac.signal, 'abort')).to.have.length(0);
      open.destroy();
    }
  });

  it('an entry of a type tar does not know is skipped, the rest restored; a header past 64 KiB is refused naming its size', async () => {
    const [h, ...body] = entryBlocks({ path: 'alloc/data/odd', body: 'odd' });
    const r = await restore(Buffer.concat([withType(h!, 'Z'), ...body, ...entryBlocks({ path: 'alloc/data/a', body: 'a' }), Buffer.alloc(1024)]));
    expect(r.entries, 'tar reads past it without handing it over').to.equal(1);
    expect(await readdir(dest.dataDir)).to.deep.equal(['a']);
    const p = `alloc/data/${'p'.repeat(70 * 1024)}`;
    const err = await refused(longNamed(p), SnapshotLimitError, /^archive header of \d+ bytes exceeds 65536$/);
    expect((err as SnapshotLimitError).limit).to.equal('header');
  });

  it('a name is bounded by the staging path it is written at: at PATH_MAX less the NUL it passes, one byte more is refused', async () => {
    const base = await realpath(dest.dir);
    // <dest>/.restore-XXXXXX/t/<name> must fit in 4095 bytes.
    const room = 4095 - Buffer.byteLength(base) - '/.restore-XXXXXX/t/'.length;
    const nameOf = (len: number) => {
      let s = 'alloc/data/';
      while (len - s.length > 255) s += `${'d'.repeat(200)}/`;
      return s + 'f'.repeat(len - s.length);
    };
    const ok = nameOf(room);
    expect((await restore(longNamed(ok))).entries).to.equal(1);
    expect(await readFile(path.join(dest.dir, ok), 'utf8')).to.equal('x');
    await rm(path.join(dest.dataDir, 'd'.repeat(200)), { recursive: true });
    for (const name of [nameOf(room + 1), nameOf(4095)]) {
      const err = await refused(
        longNamed(name),
        SnapshotLimitError,
        `archive entry ${JSON.stringify(name.slice(0, 64))}... is too long to restore under ${dest.dir}`,
      );
      expect((err as SnapshotLimitError).limit).to.equal('name');
    }
  });

  it('".." as a whole name or after normalising is an escape; "." of any type is read past', async () => {
    for (const e of [
      { path: '..', type: 'Directory' },
      { path: 'alloc/../../x', body: 'x' },
    ] as TarEntry[])
      await refused(tarOf([e]), SnapshotEscapeError, 'archive contains object that escapes alloc dir');
    const r = await restore(
      tarOf([
        { path: '.', body: '' },
        { path: 'alloc/data/a', body: 'a' },
      ]),
    );
    expect(r.entries).to.equal(2);
    expect(await readdir(dest.dataDir)).to.deep.equal(['a']);
  });

  it('GNU dump dirs are dirs, contiguous files are files; an entry without a mode gets 0644 (file) or 0755 (dir)', async () => {
    const [dh] = entryBlocks({ path: 'alloc/data/dump', type: 'Directory', mode: 0o750 });
    const [ch, ...cbody] = entryBlocks({ path: 'alloc/data/contig', body: 'contiguous', mode: 0o640 });
    const [fh, ...fbody] = entryBlocks({ path: 'alloc/data/nomode', body: 'n' });
    const [nh] = entryBlocks({ path: 'alloc/data/nomodedir', type: 'Directory' });
    const r = await restore(
      Buffer.concat([withType(dh!, 'D'), withType(ch!, '7'), ...cbody, withoutMode(fh!), ...fbody, withoutMode(nh!), Buffer.alloc(1024)]),
    );
    expect(r.entries).to.equal(4);
    const st = (rel: string) => lstat(path.join(dest.dataDir, rel));
    const own = process.geteuid?.() === 0 ? 0 : 0o700;
    expect((await st('dump')).isDirectory()).to.equal(true);
    expect(((await st('dump')).mode & 0o7777).toString(8)).to.equal((0o750 | own).toString(8));
    expect(await readFile(path.join(dest.dataDir, 'contig'), 'utf8')).to.equal('contiguous');
    expect(((await st('contig')).mode & 0o7777).toString(8)).to.equal('640');
    expect(((await st('nomode')).mode & 0o7777).toString(8)).to.equal('644');
    expect(((await st('nomodedir')).mode & 0o7777).toString(8)).to.equal('755');
  });

  it('the same dir twice is one dir (the later mode wins); a link entry never counts as setuid', async () => {
    const r = await restore(
      data(
        { path: 'alloc/data/d', type: 'Directory', mode: 0o700 },
        { path: 'alloc/data/d/f', body: 'f' },
        { path: 'alloc/data/d', type: 'Directory', mode: 0o750 },
        { path: 'alloc/data/l', type: 'SymbolicLink', linkpath: 'd/f', mode: 0o6777 },
      ),
    );
    expect(r.setuidStripped).to.deep.equal([]);
    expect(((await lstat(path.join(dest.dataDir, 'd'))).mode & 0o7777).toString(8)).to.equal('750');
    expect(await readFile(path.join(dest.dataDir, 'l'), 'utf8')).to.equal('f');
  });

  it('a link target of 4095 bytes passes the text bound, 4096 is a SnapshotLimitError', async () => {
    const linkTo = (target: string) => {
      const mtime = new Date();
      const h = new Header({ path: 'alloc/data/l', type: 'SymbolicLink', mode: 0o777, size: 0, mtime, uid: 0, gid: 0, linkpath: 'x' });
      h.encode();
      return Buffer.concat([new Pax({ path: 'alloc/data/l', linkpath: target, mtime, size: 0 }).encode(), h.block!, Buffer.alloc(1024)]);
    };
    const ok = `${'a/'.repeat(2047)}a`;
    await restore(linkTo(ok));
    expect(await readlink(path.join(dest.dataDir, 'l'))).to.equal(ok);
    await rm(path.join(dest.dataDir, 'l'));
    const err = await refused(linkTo(`${ok}a`), SnapshotLimitError, 'symlink alloc/data/l has a target of 4096 bytes (limit 4095)');
    expect((err as SnapshotLimitError).limit).to.equal('name');
  });

  it('a task with a one-letter name gets its local/ (made in dest when missing)', async () => {
    await restore(tarOf([{ path: 'w/local/f', body: 'w' }]));
    expect(await readFile(path.join(dest.dir, 'w', 'local', 'f'), 'utf8')).to.equal('w');
  });

  it("the peer's error text is cut at 64 KiB, however its body is chunked", async () => {
    const text = Buffer.alloc(100 * 1024, 'abcdefghij');
    const tar = data({ path: 'NOMAD-p-ERROR.log', body: text });
    const chunks: Buffer[] = [];
    for (let i = 0; i < tar.length; i += 4096) chunks.push(tar.subarray(i, i + 4096));
    const err = await refused(Readable.from(chunks), SnapshotRemoteError, streamErr(text.subarray(0, 65536).toString()));
    expect((err as SnapshotRemoteError).remoteMessage).to.have.length(65536);
  });

  it('an archive that adds nothing leaves dest as it was (only skipped entries, or only a dir dest has)', async () => {
    const before = await fingerprint(dest.dir);
    expect(
      (
        await restore(
          tarOf([
            { path: './', type: 'Directory' },
            { path: 'alloc/data/h', type: 'Link', linkpath: 'x' },
          ]),
        )
      ).entries,
    ).to.equal(2);
    expect(await fingerprint(dest.dir)).to.deep.equal(before);
    expect((await restore(tarOf([{ path: 'web/local/', type: 'Directory' }]))).entries).to.equal(1);
    expect(await fingerprint(dest.dir)).to.deep.equal(before);
  });

  it('a dest whose alloc/data is a link the kernel cannot follow: typed errors naming the path', async () => {
    await rm(dest.dataDir, { recursive: true });
    await symlink('data', dest.dataDir);
    await refused(data({ path: 'alloc/data/a', body: 'x' }), SnapshotStreamError, streamErr('alloc/data: too many levels of symbolic links'));
    await rm(dest.dataDir);
    await symlink('n'.repeat(256), dest.dataDir);
    const err = await refused(data({ path: 'alloc/data/a', body: 'x' }), SnapshotLimitError, 'alloc/data: name too long for this filesystem');
    expect((err as SnapshotLimitError).limit).to.equal('name');
  });

  it("replacing in dest: a dir by a file, a link that stays inside by a file; a link already outside is dest's own business", async () => {
    await mkdir(path.join(dest.dataDir, 'was-dir'));
    await writeFile(path.join(dest.dataDir, 'was-dir', 'inner'), 'old');
    await symlink('was-dir', path.join(dest.dataDir, 'was-link'));
    await symlink('/etc', path.join(dest.dataDir, 'outside-already'));
    await restore(data({ path: 'alloc/data/was-dir', body: 'file now' }, { path: 'alloc/data/was-link', body: 'file too' }));
    expect(await readFile(path.join(dest.dataDir, 'was-dir'), 'utf8')).to.equal('file now');
    expect((await lstat(path.join(dest.dataDir, 'was-link'))).isFile()).to.equal(true);
    expect(await readFile(path.join(dest.dataDir, 'was-link'), 'utf8')).to.equal('file too');
    expect(await readlink(path.join(dest.dataDir, 'outside-already'))).to.equal('/etc');
  });

  it('a link deep in dest that a new link would make lead outside is found and refused', async () => {
    await mkdir(path.join(dest.dataDir, 'deep'));
    await writeFile(path.join(dest.dataDir, 'plain'), 'p');
    await symlink('../hop/hop/../../../../outside', path.join(dest.dataDir, 'deep', 'old'));
    await refused(
      data({ path: 'alloc/data/hop', type: 'SymbolicLink', linkpath: '.' }),
      SnapshotEscapeError,
      'archive contains symlink that escapes alloc dir',
    );
  });

  it('a late escape (found in the finished tree) puts back every file and dir it replaced', async () => {
    await writeFile(path.join(dest.dataDir, 'keep'), 'old contents');
    await mkdir(path.join(dest.dataDir, 'dir'));
    await writeFile(path.join(dest.dataDir, 'dir', 'inner'), 'old inner');
    await refused(
      data(
        { path: 'alloc/data/keep', body: 'NEW' },
        { path: 'alloc/data/dir', body: 'a file now' },
        { path: 'alloc/data/added', body: 'x' },
        { path: 'alloc/data/b', type: 'SymbolicLink', linkpath: '.' },
        // Inside by its text (b/b climbs back), outside once b -> . is made.
        { path: 'alloc/data/a', type: 'SymbolicLink', linkpath: 'b/b/../../../outside' },
      ),
      SnapshotEscapeError,
      'archive contains symlink that escapes alloc dir',
    );
  });

  it('a later entry for a path replaces a large earlier one whole, whatever the writes in flight', async () => {
    const first = Buffer.alloc(5 * 1024 * 1024 + 3, 'first');
    await restore(data({ path: 'alloc/data/a', body: first, mode: 0o600 }, { path: 'alloc/data/a', body: 'second', mode: 0o640 }));
    expect(await readFile(path.join(dest.dataDir, 'a'), 'utf8')).to.equal('second');
    expect(((await lstat(path.join(dest.dataDir, 'a'))).mode & 0o777).toString(8)).to.equal('640');
  });

  it('modes of big and small files and of dirs are applied, and every handle it opened is closed', async () => {
    // The fds of this process on anything under the alloc dir (its staging dir included): exact,
    // where a count of all fds could be balanced by another test's handle closing meanwhile.
    const into = realpathSync(dest.dir);
    const fds = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return ''; // the fd readdir itself used, closed since
          }
        })
        .filter((to) => to.startsWith(into + '/'));
    const before = fds();
    expect(before).to.deep.equal([]);
    const small = Array.from({ length: 20 }, (_, i) => ({ path: `alloc/data/s${i}`, body: `small ${i}`, mode: 0o640 }));
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 'big');
    await restore(data({ path: 'alloc/data/big', body: big, mode: 0o640 }, ...small, { path: 'alloc/data/d', type: 'Directory', mode: 0o750 }));
    expect(fds(), 'open fds').to.deep.equal([]);
    expect((await readFile(path.join(dest.dataDir, 'big'))).equals(big)).to.equal(true);
    expect(((await lstat(path.join(dest.dataDir, 'big'))).mode & 0o777).toString(8)).to.equal('640');
    expect(((await lstat(path.join(dest.dataDir, 's7'))).mode & 0o777).toString(8)).to.equal('640');
    expect(await readFile(path.join(dest.dataDir, 's7'), 'utf8')).to.equal('small 7');
  });

  describe('as root', () => {
    /** A built alloc dir on a tmpfs of its own (`opts`: tmpfs options such as `size=1m`). */
    async function allocDirOnTmpfs(id: string, opts: string): Promise<AllocDir> {
      const mnt = path.join(await tmp.make('berth-small-disk-'), 'mnt');
      await mkdir(mnt);
      execFileSync('mount', ['-t', 'tmpfs', '-o', `${opts},nosuid,nodev`, 'tmpfs', mnt]);
      const ad = new AllocDir(mnt, id);
      await ad.build();
      return ad;
    }

    it("owners: a new task dir, its files and links go to the task's user; a task named alloc, or a user with uid or gid 0, never applies (root)", async function () {
      needRoot(this);
      await restore(
        tarOf([
          { path: 'db/local/f', body: 'd' },
          { path: 'db/local/big', body: Buffer.alloc(300 * 1024) },
          { path: 'db/local/l', type: 'SymbolicLink', linkpath: 'f' },
          { path: 'web/local/w', body: 'w' },
          { path: 'api/local/a', body: 'a' },
          { path: 'alloc/data/x', body: 'x' },
          { path: 'alloc/data/ro', type: 'Directory', mode: 0o555 },
        ]),
        {
          taskOwners: {
            db: { uid: 1234, gid: 2345 },
            alloc: { uid: 1234, gid: 2345 },
            web: { uid: 0, gid: 2345 },
            api: { uid: 1234, gid: 0 },
          },
        },
      );
      const own = async (rel: string) => {
        const st = await lstat(path.join(dest.dir, rel));
        return `${st.uid}:${st.gid}`;
      };
      for (const rel of ['db', 'db/local', 'db/local/f', 'db/local/big', 'db/local/l']) expect(await own(rel), rel).to.equal('1234:2345');
      for (const rel of ['web/local/w', 'api/local/a', 'alloc/data/x', 'alloc/data/ro']) expect(await own(rel), rel).to.equal('65534:65534');
      expect(((await lstat(path.join(dest.dataDir, 'ro'))).mode & 0o7777).toString(8), 'exactly its mode as root').to.equal('555');
    });

    it('a write that fails (disk full, ten files of 200 KiB on 1 MiB) is a stream error naming the file, and dest is left as it was (root)', async function () {
      needRoot(this);
      const full = await allocDirOnTmpfs('full', 'size=1m');
      const before = await fingerprint(full.dir);
      const err = await restoreSnapshot(
        streamOf(tarOf(Array.from({ length: 10 }, (_, i) => ({ path: `alloc/data/f${i}`, body: Buffer.alloc(200 * 1024, i) })))),
        full,
        { prevAllocId: 'p' },
      ).catch((e: Error) => e);
      expect(err).to.be.instanceOf(SnapshotStreamError);
      expect((err as Error).message).to.match(/^error streaming previous alloc "p" for new alloc "full": alloc\/data\/f\d: ENOSPC: no space left on device/);
      expect(await fingerprint(full.dir)).to.deep.equal(before);
      await full.destroy();
    });
    it('one file larger than the disk (3 MiB on 1 MiB) is a stream error, never a short file (root)', async function () {
      needRoot(this);
      const full = await allocDirOnTmpfs('full', 'size=1m');
      const before = await fingerprint(full.dir);
      const err = await restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/big', body: Buffer.alloc(3 * 1024 * 1024, 7) }])), full, {
        prevAllocId: 'p',
      }).catch((e: Error) => e);
      expect(err, 'a short write taken for the whole file').to.be.instanceOf(SnapshotStreamError);
      expect((err as Error).message).to.match(/alloc\/data\/big: ENOSPC: no space left on device/);
      expect(await fingerprint(full.dir)).to.deep.equal(before);
      await full.destroy();
    });
    it('out of inodes at any step, a snapshot cut off in a large body is the stream error, and dest is left as it was (root)', async function () {
      needRoot(this);
      // Few inodes, plenty of bytes: whatever the restore makes next (staging dir, dirs, the large
      // file's open) fails with ENOSPC once the free inodes run out.
      const ad = await allocDirOnTmpfs('inodes', 'size=16m,nr_inodes=96');
      const mnt = path.dirname(ad.dir);
      const filler = path.join(mnt, 'filler');
      await mkdir(filler);
      let made = 0;
      for (;;) {
        try {
          await writeFile(path.join(filler, String(made)), '');
          made++;
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).to.equal('ENOSPC');
          break;
        }
      }
      const body = Buffer.alloc(2 * 1024 * 1024, 5); // large (one handle, batches), past one batch
      const whole = tarOf([{ path: 'alloc/data/big', body }]);
      // The header and 1.5 MiB of the body, then the connection resets while the body is read.
      // Sent in 64 KiB pieces as the restore asks for them, so the reset meets it reading the body.
      const cut = () => {
        let at = 0;
        const end = 512 + 1536 * 1024;
        return new Readable({
          read() {
            if (at >= end) return this.destroy(new Error('connection reset by peer'));
            this.push(whole.subarray(at, Math.min(end, (at += 64 * 1024))));
          },
        });
      };
      const before = await fingerprint(ad.dir);
      const failedAt: string[] = [];
      // One more free inode each round, until the whole snapshot fits: every step runs out once.
      for (let free = 0; ; free++) {
        if (free > 0) await rm(path.join(filler, String(made - free)));
        const err = await restoreSnapshot(cut(), ad, { prevAllocId: 'p' }).catch((e: Error) => e);
        expect(err, `${free} inodes free`).to.be.instanceOf(SnapshotStreamError);
        expect((err as Error).message, `${free} inodes free: no host path`).to.not.include(mnt);
        expect(await fingerprint(ad.dir), `${free} inodes free`).to.deep.equal(before);
        const full = await restoreSnapshot(streamOf(whole), ad, { prevAllocId: 'p' }).catch((e: Error) => e);
        if (!(full instanceof Error)) break;
        expect(full, `${free} inodes free`).to.be.instanceOf(SnapshotStreamError);
        expect(await fingerprint(ad.dir), `${free} inodes free`).to.deep.equal(before);
        failedAt.push(/: ([^:]+): ENOSPC: no space left on device$/.exec(full.message)?.[1] ?? full.message);
        expect(free, 'the whole snapshot fits in a few inodes').to.be.below(16);
      }
      expect(failedAt[0], 'the first step: the staging dir').to.equal('staging dir');
      expect(failedAt, "a round where the large file's own open ran out").to.include('alloc/data/big');
      expect((await readFile(path.join(ad.dataDir, 'big'))).equals(body)).to.equal(true);
    });
    it("an artifact for a task's user is written only where that user could write: owner, group and other bits, the sticky bit (root)", async function () {
      needRoot(this);
      const who = { uid: 1234, gid: 2345 };
      type Case = {
        name: string;
        top: [number, number, number];
        local?: [number, number, number];
        existing?: number;
        under: string;
        entry: string;
        ok: boolean;
      };
      const cases: Case[] = [
        { name: 'own dir, owner bits', top: [1234, 0, 0o755], under: 'newtop', entry: 'x', ok: true },
        { name: "the user's group, group bits", top: [0, 2345, 0o770], under: 'newtop', entry: 'x', ok: true },
        { name: 'anyone, other bits', top: [0, 0, 0o707], under: 'newtop', entry: 'x', ok: true },
        { name: 'root 0755', top: [0, 0, 0o755], under: 'newtop', entry: 'x', ok: false },
        { name: 'not sticky: replaces a file of root', top: [0, 0, 0o755], local: [0, 0, 0o777], existing: 0, under: 'local', entry: 'f', ok: true },
        { name: 'sticky: a new entry', top: [0, 0, 0o755], local: [0, 0, 0o1777], under: 'local', entry: 'g', ok: true },
        { name: "sticky: replaces the user's own file", top: [0, 0, 0o755], local: [0, 0, 0o1777], existing: 1234, under: 'local', entry: 'f', ok: true },
        {
          name: "sticky, the user's dir: replaces root's file",
          top: [0, 0, 0o755],
          local: [1234, 0, 0o1777],
          existing: 0,
          under: 'local',
          entry: 'f',
          ok: true,
        },
        { name: "sticky: root's file in root's dir", top: [0, 0, 0o755], local: [0, 0, 0o1777], existing: 0, under: 'local', entry: 'f', ok: false },
      ];
      for (const c of cases) {
        const td = await tmp.make('berth-art-');
        await chown(td, c.top[0], c.top[1]);
        await chmod(td, c.top[2]);
        if (c.local) {
          await mkdir(path.join(td, 'local'));
          if (c.existing !== undefined) {
            await writeFile(path.join(td, 'local', 'f'), 'old');
            await chown(path.join(td, 'local', 'f'), c.existing, 0);
          }
          await chown(path.join(td, 'local'), c.local[0], c.local[1]);
          await chmod(path.join(td, 'local'), c.local[2]);
        }
        const art = { dir: td, allocId: ID, built: true, lock: new RwLock() };
        const before = await fingerprint(td);
        const r = await restoreSnapshot(streamOf(tarOf([{ path: c.entry, body: 'new' }])), art, {
          prevAllocId: '',
          artifact: { under: c.under, label: 'a.tar', writableBy: who },
          owner: who, // as the artifact fetcher gives it: what is made belongs to the task's user
        }).catch((e: Error) => e);
        if (c.ok) {
          expect(r, `${c.name}: ${(r as Error).message}`).to.not.be.instanceOf(Error);
          expect(await readFile(path.join(td, c.under, c.entry), 'utf8'), c.name).to.equal('new');
          if (c.under === 'newtop') expect(((await lstat(path.join(td, 'newtop'))).mode & 0o7777).toString(8), c.name).to.equal('755');
        } else {
          expect(r, c.name).to.be.instanceOf(SnapshotStreamError);
          const where = c.under === 'newtop' ? 'the task dir' : 'local';
          expect((r as Error).message, c.name).to.equal(`error unpacking artifact a.tar: permission denied: uid 1234 may not write in ${where}`);
          expect(await fingerprint(td), c.name).to.deep.equal(before);
        }
      }
    });
  });

  describe('as a user other than root (switches its effective uid to nobody for the restore)', () => {
    let home: string;
    let mine: AllocDir;
    /** Runs `fn` with euid/egid nobody (the thread pool follows: glibc applies set*id to every thread). */
    const asNobody = async <T>(fn: () => Promise<T>): Promise<T> => {
      process.setegid!(65534);
      process.seteuid!(65534);
      try {
        return await fn();
      } finally {
        process.seteuid!(0);
        process.setegid!(0);
      }
    };
    beforeEach(async function () {
      needRoot(this);
      // Under /tmp itself: the suite's own temp dir is private to root.
      home = await mkdtemp('/tmp/berth-nonroot-');
      await chmod(home, 0o755);
      mine = new AllocDir(home, 'mine');
      await mine.build();
      // A non-root berth owns its alloc dirs.
      for (const d of [mine.dir, mine.sharedDir, mine.dataDir, mine.logsDir, mine.tmpDir]) await chown(d, 65534, 65534);
    });
    afterEach(async () => {
      // Whatever happened in a test, the process is root again before anything else runs.
      if (process.geteuid?.() !== 0) process.seteuid!(0);
      if (process.getegid?.() !== 0) process.setegid!(0);
      if (home) await rm(home, { recursive: true, force: true });
    });

    it('owners are left to the restoring user (taskOwners ignored), dirs get their modes plus rwx for it after the merge, merged dirs keep theirs (root)', async function () {
      needRoot(this);
      await chmod(mine.dataDir, 0o751);
      const r = await asNobody(() =>
        restoreSnapshot(
          streamOf(
            tarOf([
              { path: 'alloc/data/ro', type: 'Directory', mode: 0o555 },
              { path: 'alloc/data/ro/f', body: 'f', mode: 0o640 },
              { path: 'alloc/data/l', type: 'SymbolicLink', linkpath: 'ro/f' },
              { path: 'web/local/w', body: 'w' },
            ]),
          ),
          mine,
          { prevAllocId: 'p', taskOwners: { web: { uid: 1234, gid: 2345 } } },
        ),
      );
      expect(r.entries).to.equal(4);
      const st = (rel: string) => lstat(path.join(mine.dir, rel));
      for (const rel of ['alloc/data/ro', 'alloc/data/ro/f', 'alloc/data/l', 'web/local/w']) expect((await st(rel)).uid, rel).to.equal(65534);
      expect(((await st('alloc/data/ro')).mode & 0o7777).toString(8)).to.equal('755');
      expect(((await st('alloc/data/ro/f')).mode & 0o7777).toString(8)).to.equal('640');
      expect(((await st('alloc/data')).mode & 0o7777).toString(8), 'merged into: kept').to.equal('751');
      expect(await readFile(path.join(mine.dataDir, 'l'), 'utf8')).to.equal('f');
    });

    it('a read-only dir it replaces goes with the staging dir: nothing of the restore is left in the alloc dir (root)', async function () {
      needRoot(this);
      const ro = path.join(mine.dataDir, 'ro');
      await mkdir(path.join(ro, 'sub'), { recursive: true });
      await writeFile(path.join(ro, 'sub', 'f'), 'old');
      await chown(ro, 65534, 65534);
      await chown(path.join(ro, 'sub'), 65534, 65534);
      await chmod(path.join(ro, 'sub'), 0o555);
      await asNobody(() => restoreSnapshot(streamOf(tarOf([{ path: 'alloc/data/ro', body: 'now a file' }])), mine, { prevAllocId: 'p' }));
      expect(await readFile(ro, 'utf8')).to.equal('now a file');
      expect((await readdir(mine.dir)).filter((n) => n.startsWith('.restore-'))).to.deep.equal([]);
    });

    it('what it may not write or look through is a stream error naming the entry, and dest is left as it was (root)', async function () {
      needRoot(this);
      await mkdir(path.join(mine.dataDir, 'roots'), { mode: 0o755 });
      await mkdir(path.join(mine.sharedDir, 'private'), { mode: 0o700 });
      await mkdir(path.join(mine.dataDir, 'nosearch'), { mode: 0o744 });
      for (const [entries, message] of [
        [[{ path: 'alloc/data/roots/x', body: 'x' }], /: alloc\/data\/roots\/x: EACCES: permission denied/],
        [[{ path: 'alloc/data/l', type: 'SymbolicLink', linkpath: '../private/x' }], /: alloc\/data\/l: EACCES: permission denied/],
        // A dir of dest it may read but not search: the merge cannot even look inside.
        [
          [
            { path: 'alloc/data/nosearch', type: 'Directory' },
            { path: 'alloc/data/nosearch/x', body: 'x' },
          ],
          /: alloc\/data\/nosearch\/x: EACCES: permission denied/,
        ],
      ] as Array<[TarEntry[], RegExp]>) {
        const before = await fingerprint(mine.dir);
        const err = await asNobody(() => restoreSnapshot(streamOf(tarOf(entries)), mine, { prevAllocId: 'p' }).catch((e: Error) => e));
        expect(err).to.be.instanceOf(SnapshotStreamError);
        expect((err as Error).message).to.match(message);
        expect(await fingerprint(mine.dir)).to.deep.equal(before);
      }
    });
  });
});
