import { expect } from 'chai';
import { appendFile, chmod, chown, link, mkdir, rm, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import {
  AllocFileNotFoundError,
  AllocFileTypeError,
  AllocFileUnreadableError,
  AllocSymlinkLoopError,
  AllocFSArgumentError,
  AllocFSError,
  AllocPathEscapeError,
  PrivateFileReadError,
  SecretFileReadError,
  createAllocFS,
  goFileMode,
  MAX_READ_AT_BYTES,
  type AllocFS,
} from '../../../actors/allocfs/index.ts';
import { tempDirs } from '../allocdir/helpers.ts';
import { execFileSync } from 'node:child_process';
import { lstatSync, statSync, type Stats } from 'node:fs';
import net from 'node:net';

/** Collects a stream's chunks until `until(text)` holds, then aborts it. */
async function readUntil(it: AsyncIterable<Buffer>, ctl: AbortController, until: (s: string) => boolean): Promise<string> {
  let text = '';
  for await (const chunk of it) {
    text += chunk.toString();
    if (until(text)) ctl.abort();
  }
  return text;
}

describe('alloc fs (runner.fs)', () => {
  const tmp = tempDirs();
  let ad: AllocDir;
  let afs: AllocFS;
  let outside: string;
  beforeEach(async () => {
    ad = new AllocDir(await tmp.make('berth-fs-'), '5e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
    await ad.build();
    await ad.newTaskDir('web').build();
    afs = createAllocFS(ad);
    outside = await tmp.make('berth-outside-');
    await writeFile(path.join(outside, 'passwd'), 'root:x:0:0');
    await writeFile(path.join(ad.dir, 'web', 'secrets', 'token'), 's3cret');
    await writeFile(path.join(ad.dir, 'web', 'private', 'key'), 'k');
    await writeFile(path.join(ad.dir, 'web', 'local', 'app.conf'), 'port=80\n');
  });
  afterEach(async () => {
    await ad.destroy();
  });
  after(() => tmp.cleanup());

  it('lists a directory sorted by name, with Go file modes; "/" is the alloc dir', async () => {
    const root = await afs.list('/');
    expect(root.map((e) => e.name)).to.deep.equal(['alloc', 'web']);
    expect(root.every((e) => e.isDir)).to.equal(true);
    const web = await afs.list('web');
    expect(web.map((e) => e.name)).to.deep.equal(['local', 'private', 'secrets', 'tmp']);
    expect(web.find((e) => e.name === 'tmp')!.fileMode).to.equal('dtrwxrwxrwx');
    expect(web.find((e) => e.name === 'local')!.fileMode).to.equal('drwxrwxrwx');
    const local = await afs.list('web/local');
    expect(local).to.have.length(1);
    expect(local[0]).to.include({ name: 'app.conf', isDir: false, size: 8 });
    expect(local[0]!.modTime).to.be.closeTo(Date.now(), 60_000);
    expect((await afs.list('web/secrets')).map((e) => e.name)).to.include('token'); // listing is allowed, as in Nomad
  });

  it('stat follows a symlink that stays inside; list shows it as a link', async () => {
    await symlink('../local/app.conf', path.join(ad.dir, 'web', 'tmp', 'conf'));
    const st = await afs.stat('web/tmp/conf');
    expect(st).to.include({ name: 'conf', isDir: false, size: 8, fileMode: goFileMode(statSync(path.join(ad.dir, 'web/local/app.conf'))) });
    const listed = (await afs.list('web/tmp')).find((e) => e.name === 'conf')!;
    expect(listed.fileMode.startsWith('L')).to.equal(true);
    expect((await afs.stat('/')).name).to.equal(ad.allocId);
  });

  it('readAt reads a window; past the end gives fewer bytes', async () => {
    expect((await afs.readAt('web/local/app.conf', 5, 2)).toString()).to.equal('80');
    expect((await afs.readAt('web/local/app.conf', 5, 100)).toString()).to.equal('80\n');
    expect((await afs.readAt('web/local/app.conf', 100, 10)).length).to.equal(0);
    expect((await afs.readAt('web/local/app.conf', 0, 0)).length).to.equal(0);
  });

  it('refuses paths that escape through .., and absolute paths stay inside', async () => {
    for (const p of ['..', '../x', 'web/../../x', '/../../etc/passwd']) {
      await rejects(afs.list(p), AllocPathEscapeError, 'Path escapes the alloc directory');
      await rejects(afs.readAt(p, 0, 10), AllocPathEscapeError);
    }
    await rejects(afs.readAt('/etc/passwd', 0, 10), AllocFileNotFoundError); // joined, not honoured
  });

  it('refuses symlinks out of the alloc dir, for every call', async () => {
    await symlink(path.join(outside, 'passwd'), path.join(ad.dir, 'web', 'local', 'evil'));
    await symlink(outside, path.join(ad.dir, 'alloc', 'data', 'out'));
    await rejects(afs.readAt('web/local/evil', 0, 10), AllocPathEscapeError);
    await rejects(afs.stat('web/local/evil'), AllocPathEscapeError);
    await rejects(afs.list('alloc/data/out'), AllocPathEscapeError);
    await rejects(collect(afs.stream('alloc/data/out/passwd')), AllocPathEscapeError);
  });

  it("refuses to read secrets/ and private/ with Nomad's messages, also through a symlink", async () => {
    await rejects(afs.readAt('web/secrets/token', 0, 10), SecretFileReadError, 'Reading secret file prohibited: web/secrets/token');
    await rejects(afs.readAt('/web/private/key', 0, 10), PrivateFileReadError, 'Reading private file prohibited: /web/private/key');
    await rejects(collect(afs.stream('web/secrets/token')), SecretFileReadError);
    await symlink('../secrets/token', path.join(ad.dir, 'web', 'local', 'peek'));
    await rejects(afs.readAt('web/local/peek', 0, 10), SecretFileReadError, 'web/local/peek');
    expect((await afs.stat('web/secrets/token')).size).to.equal(6); // stat is allowed, as in Nomad
  });

  it('reports a missing path and bad arguments with named errors', async () => {
    await rejects(afs.stat('web/nope'), AllocFileNotFoundError);
    await rejects(afs.list('web/local/app.conf/x'), AllocFileNotFoundError);
    await rejects(afs.readAt('web/local/app.conf', -1, 1), AllocFSArgumentError);
    await rejects(afs.readAt('web/local/app.conf', 0, 1.5), AllocFSArgumentError);
    await rejects(afs.readAt('web', 0, 1), AllocFSError, /is a directory/);
  });

  it('streams from an offset and ends at the end without follow', async () => {
    expect(await collect(afs.stream('web/local/app.conf', { offset: 5 }))).to.equal('80\n');
  });

  it('follows appends and a truncation until aborted, releasing the watcher', async () => {
    const file = path.join(ad.dir, 'alloc', 'logs', 'web.stdout.0');
    await writeFile(file, 'one\n');
    const ctl = new AbortController();
    const seen: string[] = [];
    const text = readUntil(afs.stream('alloc/logs/web.stdout.0', { follow: true, signal: ctl.signal }), ctl, (s) => {
      seen.push(s);
      if (s === 'one\n') void appendFile(file, 'two\n');
      if (s === 'one\ntwo\n') void truncate(file, 0).then(() => appendFile(file, 'three\n'));
      return s.endsWith('three\n');
    });
    expect(await text).to.equal('one\ntwo\nthree\n');
  });

  it('with follow waits for a file to appear; a deleted file ends the stream', async () => {
    const file = path.join(ad.dir, 'alloc', 'data', 'later.txt');
    const ctl = new AbortController();
    const got = collect(afs.stream('alloc/data/later.txt', { follow: true, signal: ctl.signal }), (s) => {
      if (s === 'hello') void rm(file);
    });
    await new Promise((r) => setImmediate(r));
    await writeFile(file, 'hello');
    expect(await got).to.equal('hello');
    await rejects(collect(afs.stream('alloc/data/never.txt')), AllocFileNotFoundError);
  });

  it('an aborted signal ends the stream at once', async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect(await collect(afs.stream('web/local/app.conf', { follow: true, signal: ctl.signal }))).to.equal('');
  });

  it('goFileMode renders the special bits as Go does', async () => {
    const f = path.join(ad.dir, 'alloc', 'data', 'suid');
    await writeFile(f, '');
    await chmod(f, 0o4755);
    expect(goFileMode(lstatSync(f))).to.equal('urwxr-xr-x');
    await utimes(f, 0, 0);
    expect((await afs.stat('alloc/data/suid')).modTime).to.equal(0);
    await mkdir(path.join(ad.dir, 'alloc', 'data', 'g'), { mode: 0o700 });
    await chmod(path.join(ad.dir, 'alloc', 'data', 'g'), 0o2750);
    expect((await afs.stat('alloc/data/g')).fileMode).to.equal('dgrwxr-x---');
  });

  it("goFileMode: every type letter in Go's order, then the nine permission bits", async () => {
    // Real files where the host has them; a Stats-shaped value for a block device (none to rely on).
    const fifo = path.join(ad.dir, 'alloc', 'data', 'fifo');
    execFileSync('mkfifo', ['-m', '0640', fifo]);
    expect(goFileMode(lstatSync(fifo))).to.equal('prw-r-----');
    let err: unknown;
    await afs.readAt('alloc/data/fifo', 0, 1).catch((e) => (err = e));
    expect(err).to.be.instanceOf(AllocFileTypeError);
    expect((err as AllocFSError).code).to.equal('EFTYPE');
    expect((err as Error).message).to.equal('alloc/data/fifo is a FIFO (named pipe): the alloc fs reads only regular files');
    expect(goFileMode(statSync('/dev/null'))).to.equal('Dcrw-rw-rw-');
    const sock = path.join(ad.dir, 'alloc', 'data', 'sock');
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(sock, r));
    try {
      await chmod(sock, 0o755);
      expect(goFileMode(lstatSync(sock))).to.equal('Srwxr-xr-x');
    } finally {
      await new Promise((r) => srv.close(r));
    }
    await symlink('x', path.join(ad.dir, 'alloc', 'data', 'ln'));
    expect(goFileMode(lstatSync(path.join(ad.dir, 'alloc', 'data', 'ln')))).to.equal('Lrwxrwxrwx');
    const fake = (kind: 'block' | 'none', mode: number) =>
      ({
        mode,
        isDirectory: () => false,
        isSymbolicLink: () => false,
        isBlockDevice: () => kind === 'block',
        isCharacterDevice: () => false,
        isFIFO: () => false,
        isSocket: () => false,
      }) as unknown as Stats;
    expect(goFileMode(fake('block', 0o660))).to.equal('Drw-rw----');
    expect(goFileMode(fake('none', 0o7777))).to.equal('ugtrwxrwxrwx');
    expect(goFileMode(fake('none', 0o1001))).to.equal('t--------x');
    expect(goFileMode(fake('none', 0o400))).to.equal('-r--------');
    expect(goFileMode(fake('none', 0))).to.equal('----------');
  });

  it('list sorts by name whatever order the directory gives; a symlink loop is its own error, named', async () => {
    for (const n of ['zz', 'mm', 'aa', 'ZZ']) await writeFile(path.join(ad.dir, 'alloc', 'data', n), n);
    expect((await afs.list('alloc/data')).map((e) => e.name)).to.deep.equal(['ZZ', 'aa', 'mm', 'zz']);
    // Byte order, as Nomad (Go) sorts: U+FFFD (EF BF BD) before U+1F600 (F0 9F 98 80), where
    // JavaScript's UTF-16 order puts the surrogate pair (D83D…) first.
    const astral = path.join(ad.dir, 'alloc', 'data', 'astral');
    await mkdir(astral);
    for (const n of ['\u{1F600}', '\uFFFD', 'a']) await writeFile(path.join(astral, n), n);
    expect((await afs.list('alloc/data/astral')).map((e) => e.name)).to.deep.equal(['a', '\uFFFD', '\u{1F600}']);
    await symlink('loop-b', path.join(ad.dir, 'alloc', 'data', 'loop-a'));
    await symlink('loop-a', path.join(ad.dir, 'alloc', 'data', 'loop-b'));
    for (const call of [() => afs.stat('alloc/data/loop-a'), () => afs.readAt('alloc/data/loop-a', 0, 1), () => afs.list('alloc/data/loop-a')]) {
      let err: unknown;
      await call().catch((e) => (err = e));
      expect(err).to.be.instanceOf(AllocSymlinkLoopError);
      expect((err as AllocFSError).code).to.equal('ELOOP');
      expect((err as Error).message).to.equal('alloc/data/loop-a: too many levels of symbolic links');
    }
  });

  it('a name too long is an AllocFSError with its errno, message and cause: not a symlink loop, not an escape', async () => {
    const given = `alloc/data/${'x'.repeat(300)}`;
    for (const call of [() => afs.stat(given), () => afs.readAt(given, 0, 1), () => afs.list(given)]) {
      const err = (await call().catch((e: unknown) => e)) as AllocFSError;
      expect(err).to.be.instanceOf(AllocFSError);
      expect(err).to.not.be.instanceOf(AllocSymlinkLoopError);
      expect(err).to.not.be.instanceOf(AllocPathEscapeError);
      expect(err.code).to.equal('ENAMETOOLONG');
      expect((err.cause as NodeJS.ErrnoException).code).to.equal('ENAMETOOLONG');
      expect(err.message).to.equal(`${given}: ENAMETOOLONG: name too long`);
    }
  });

  it('a host file is refused only when root-owned, hard-linked and unreadable by others (root)', async function () {
    if (process.geteuid?.() !== 0) return this.skip();
    const dir = path.join(ad.dir, 'web', 'local');
    const other = await tmp.make('berth-links-');
    const plant = async (name: string, mode: number, uid: number, linked: boolean) => {
      const f = path.join(dir, name);
      await writeFile(f, name);
      await chmod(f, mode);
      await chown(f, uid, uid);
      if (linked) await link(f, path.join(other, name));
    };
    await plant('refused', 0o640, 0, true);
    await plant('readable', 0o644, 0, true);
    await plant('single', 0o600, 0, false);
    await plant('users', 0o600, 65534, true);
    await rejects(
      afs.readAt('web/local/refused', 0, 10),
      AllocFileUnreadableError,
      'web/local/refused is a host file only root may read: the alloc fs does not serve it',
    );
    for (const name of ['readable', 'single', 'users']) expect((await afs.readAt(`web/local/${name}`, 0, 20)).toString(), name).to.equal(name);
  });

  describe('what a hostile caller meets (exact refusals)', () => {
    it('secrets/ and private/ are refused however the name is cased, the dirs themselves included, before any lookup', async () => {
      for (const p of ['web/SECRETS/token', 'web/Secrets', 'web/secrets', '/web/secrets/', 'web/secrets/none', 'web/local/../secrets/token']) {
        await rejects(afs.readAt(p, 0, 1), SecretFileReadError, `Reading secret file prohibited: ${p}`);
        await rejects(collect(afs.stream(p)), SecretFileReadError);
      }
      for (const p of ['web/PRIVATE/key', 'web/private']) await rejects(afs.readAt(p, 0, 1), PrivateFileReadError, `Reading private file prohibited: ${p}`);
      // Only a task's own secrets/ and private/: a look-alike name or the alloc dir's are plain paths.
      await writeFile(path.join(ad.dir, 'web', 'local', 'secrets'), 'not one');
      expect((await afs.readAt('web/local/secrets', 0, 100)).toString()).to.equal('not one');
      await mkdir(path.join(ad.dir, 'web', 'secretsX'));
      await writeFile(path.join(ad.dir, 'web', 'secretsX', 'f'), 'x');
      expect((await afs.readAt('web/secretsX/f', 0, 1)).toString()).to.equal('x');
      await rejects(afs.readAt('web/privateer', 0, 1), AllocFileNotFoundError, 'no such file or directory in the alloc dir: web/privateer');
      await mkdir(path.join(ad.dir, 'alloc', 'data', 'secrets'));
      await writeFile(path.join(ad.dir, 'alloc', 'data', 'secrets', 't'), 'shared');
      expect((await afs.readAt('alloc/data/secrets/t', 0, 6)).toString()).to.equal('shared');
    });

    it('a path that is not a string or holds a NUL is an argument error; so is a bad offset or limit, named', async () => {
      await rejects(afs.stat(7 as never), AllocFSArgumentError, 'path must be a string');
      await rejects(afs.list('web\0/local'), AllocFSArgumentError, 'path must not contain a NUL byte: "web\\u0000/local"');
      for (const [offset, limit, text] of [
        [-1, 1, 'offset must be a non-negative integer, got -1'],
        [0.5, 1, 'offset must be a non-negative integer, got 0.5'],
        [0, -2, 'limit must be a non-negative integer, got -2'],
        [0, 2 ** 53, 'limit must be a non-negative integer, got 9007199254740992'],
        [Number.NaN, 1, 'offset must be a non-negative integer, got NaN'],
      ] as const)
        await rejects(afs.readAt('web/local/app.conf', offset, limit), AllocFSArgumentError, text);
      await rejects(collect(afs.stream('web/local/app.conf', { offset: -5 })), AllocFSArgumentError, 'offset must be a non-negative integer, got -5');
    });

    it('readAt: a window past one read is refused with what to do instead; bytes come whole from any offset', async () => {
      const big = path.join(ad.dir, 'alloc', 'data', 'sparse');
      await writeFile(big, '');
      await truncate(big, MAX_READ_AT_BYTES + 10);
      await rejects(
        afs.readAt('alloc/data/sparse', 0, MAX_READ_AT_BYTES + 1),
        AllocFSArgumentError,
        `limit: ${MAX_READ_AT_BYTES + 1} bytes from alloc/data/sparse is more than one read returns (${MAX_READ_AT_BYTES}); stream the file instead`,
      );
      // The limit is cut to the file first: the last 10 bytes past the bound are fine.
      expect((await afs.readAt('alloc/data/sparse', MAX_READ_AT_BYTES, 1000)).length).to.equal(10);
      // From the end on, nothing is left to read, whatever the limit asked.
      expect((await afs.readAt('alloc/data/sparse', MAX_READ_AT_BYTES + 10, MAX_READ_AT_BYTES + 1)).length).to.equal(0);
      expect((await afs.readAt('web/local/app.conf', 0, 8)).toString()).to.equal('port=80\n');
      expect((await afs.readAt('web/local/app.conf', 1, 3)).toString()).to.equal('ort');
    });

    it('stream yields 64 KiB chunks in order from the offset, and a directory or a missing dir is a named error', async () => {
      const body = Buffer.alloc(150_000);
      for (let i = 0; i < body.length; i++) body[i] = i % 251;
      await writeFile(path.join(ad.dir, 'alloc', 'data', 'blob'), body);
      const chunks: Buffer[] = [];
      for await (const c of afs.stream('alloc/data/blob', { offset: 10 })) chunks.push(c);
      expect(chunks.map((c) => c.length)).to.deep.equal([65536, 65536, 150_000 - 10 - 131072]);
      expect(Buffer.concat(chunks).equals(body.subarray(10))).to.equal(true);
      let err: unknown;
      await collect(afs.stream('web/local')).catch((e) => (err = e));
      expect(err).to.be.instanceOf(AllocFSError);
      expect((err as AllocFSError).message).to.equal('web/local is a directory');
      expect((err as AllocFSError).code).to.equal('EISDIR');
      // With follow, a file in a dir that does not exist is not waited for.
      await rejects(collect(afs.stream('alloc/nodir/f', { follow: true, signal: new AbortController().signal })), AllocFileNotFoundError, 'alloc/nodir/f');
    });

    it('errors carry the errno name; listing a file is "not found" with ENOTDIR; a destroyed alloc dir is not found', async () => {
      let err: unknown;
      await afs.list('web/local/app.conf').catch((e) => (err = e));
      expect(err).to.be.instanceOf(AllocFileNotFoundError);
      expect((err as AllocFSError).code).to.equal('ENOTDIR');
      await afs.stat('nope').catch((e) => (err = e));
      expect((err as AllocFSError).code).to.equal('ENOENT');
      expect((err as Error).message).to.equal('no such file or directory in the alloc dir: nope');
      expect((await afs.stat('web/local/')).name).to.equal('local');
      expect(await afs.stat('web/local/app.conf')).to.include({
        name: 'app.conf',
        isDir: false,
        size: 8,
        fileMode: goFileMode(statSync(path.join(ad.dir, 'web/local/app.conf'))),
      });
      const gone = createAllocFS({ dir: path.join(ad.dir, 'no-such-alloc'), tasks: () => [] });
      await rejects(gone.list('/'), AllocFileNotFoundError);
      await rejects(gone.readAt('x', 0, 1), AllocFileNotFoundError);
    });
  });
});

/** Asserts that `p` rejects with an instance of `cls` whose message includes `text`. */
async function rejects(p: Promise<unknown>, cls: abstract new (...a: never[]) => Error, text?: string | RegExp): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  if (err === undefined) throw new Error(`expected a rejection with ${cls.name}`);
  expect(err).to.be.instanceOf(cls);
  if (typeof text === 'string') expect((err as Error).message).to.include(text);
  else if (text) expect((err as Error).message).to.match(text);
}

async function collect(it: AsyncIterable<Buffer>, onChunk?: (text: string) => void): Promise<string> {
  let text = '';
  for await (const c of it) {
    text += c.toString();
    onChunk?.(text);
  }
  return text;
}
