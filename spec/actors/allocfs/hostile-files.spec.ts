/**
 * Files a task can plant in its own dirs (a FIFO, a unix socket, a device node, a symlink loop)
 * and odd arguments (a NUL in a path, a 2^33 read limit): every alloc-fs, log and snapshot call
 * answers or fails with a named error, and never takes a thread-pool thread it cannot give back.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import { AllocFSArgumentError, AllocFSError, createAllocFS, type AllocFS } from '../../../actors/allocfs/index.ts';
import { readTaskLogs } from '../../../actors/drivers/logs/reader.ts';
import { BerthError } from '../../../model/errors.ts';
import { UnsupportedFileTypeError } from '../../../actors/allocdir/safe-open.ts';
import { isRoot, tempDirs } from '../allocdir/helpers.ts';

/** Settles `p` or fails once `ms` pass: a call that blocks on a FIFO never settles. */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what} did not settle within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Releases anything stuck opening `fifo` for reading (open for writing meets it), then removes it. */
export function releaseFifo(fifo: string): void {
  try {
    fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
  } catch {
    // no reader waiting: nothing to release
  }
}

/** Settles with the error thrown (or undefined when it answered). */
async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e;
  }
}

async function drain(it: AsyncIterable<Buffer>): Promise<number> {
  let n = 0;
  for await (const c of it) n += c.length;
  return n;
}

describe('hostile files in a task dir', () => {
  const tmp = tempDirs();
  let ad: AllocDir;
  let afs: AllocFS;
  let local: string;
  const fifos: string[] = [];
  const servers: net.Server[] = [];
  beforeEach(async () => {
    ad = new AllocDir(await tmp.make('berth-hostile-fs-'), '6e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
    await ad.build();
    await ad.newTaskDir('web').build();
    afs = createAllocFS(ad);
    local = path.join(ad.dir, 'web', 'local');
    await writeFile(path.join(local, 'ok.txt'), 'fine\n');
  });
  afterEach(async () => {
    for (const f of fifos.splice(0)) releaseFifo(f);
    for (const s of servers.splice(0)) s.close();
    await ad.destroy();
  });
  after(() => tmp.cleanup());

  const mkfifo = (p: string) => {
    execFileSync('mkfifo', [p]);
    fifos.push(p);
  };

  it('refuses a FIFO in readAt and stream with a typed error, while the thread pool stays usable', async () => {
    mkfifo(path.join(local, 'f'));
    // More blocked opens than the pool has threads would freeze every other file call.
    const calls = Array.from({ length: 6 }, () => errorOf(afs.readAt('web/local/f', 0, 10)));
    calls.push(errorOf(drain(afs.stream('web/local/f'))));
    const errs = await within(5000, 'readAt/stream of a FIFO', Promise.all(calls));
    for (const e of errs) {
      expect(e).to.be.instanceOf(AllocFSError);
      expect((e as Error).message).to.match(/FIFO|fifo|named pipe/);
    }
    expect(await within(5000, 'an unrelated readFile', readFile(path.join(local, 'ok.txt'), 'utf8'))).to.equal('fine\n');
    // list and stat still describe it
    expect((await afs.list('web/local')).map((e) => e.name)).to.include('f');
    expect((await afs.stat('web/local/f')).fileMode).to.match(/^p/);
  });

  it('refuses a unix socket with a typed error', async () => {
    const sock = path.join(local, 's.sock');
    const srv = net.createServer();
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(sock, r));
    const e = await within(5000, 'readAt of a socket', errorOf(afs.readAt('web/local/s.sock', 0, 10)));
    expect(e).to.be.instanceOf(AllocFSError);
    expect((e as Error).message).to.match(/socket/);
  });

  it('refuses a device node with a typed error (root: mknod)', async function () {
    if (!isRoot()) return this.skip();
    execFileSync('mknod', [path.join(local, 'zero'), 'c', '1', '5']);
    const e = await within(5000, 'readAt of a device', errorOf(afs.readAt('web/local/zero', 0, 10)));
    expect(e).to.be.instanceOf(AllocFSError);
    expect((e as Error).message).to.match(/device/);
  });

  it('a symlink loop, a NUL in a path and a 2^33 limit are named errors, not TypeError/RangeError/ELOOP', async () => {
    await symlink('b', path.join(local, 'a'));
    await symlink('a', path.join(local, 'b'));
    for (const call of [
      () => afs.readAt('web/local/a', 0, 1),
      () => afs.stat('web/local/a'),
      () => afs.list('web/local/a'),
      () => drain(afs.stream('web/local/a')),
      () => afs.readAt('web/local/ok\0.txt', 0, 1),
      () => afs.list('web\0'),
      () => drain(afs.stream('web/\0')),
    ]) {
      const e = await errorOf(call());
      expect(e, String(e)).to.be.instanceOf(AllocFSError);
    }
    // A limit past the file is the file; a limit no buffer can hold is refused by name.
    expect((await afs.readAt('web/local/ok.txt', 0, 2 ** 33)).toString()).to.equal('fine\n');
    const big = path.join(local, 'big');
    await writeFile(big, '');
    fs.truncateSync(big, 2 ** 33);
    const e = await errorOf(afs.readAt('web/local/big', 0, 2 ** 33));
    expect(e).to.be.instanceOf(AllocFSArgumentError);
  });

  it('the log reader refuses a FIFO planted as a log file, typed and at once', async () => {
    mkfifo(path.join(ad.logsDir, 'web.stdout.0'));
    const e = await within(5000, 'readTaskLogs of a FIFO', errorOf(drain(readTaskLogs(ad.logsDir, 'web', 'stdout'))));
    expect(e).to.be.instanceOf(UnsupportedFileTypeError);
    expect(e).to.be.instanceOf(BerthError);
    expect((e as UnsupportedFileTypeError).path).to.equal(path.join(ad.logsDir, 'web.stdout.0'));
  });

  it('a snapshot skips FIFOs, sockets and loops and completes', async () => {
    mkfifo(path.join(local, 'f'));
    await mkdir(path.join(local, 'd'));
    await symlink('l2', path.join(local, 'd', 'l1'));
    await symlink('l1', path.join(local, 'd', 'l2'));
    const out = new PassThrough();
    const n = drain(out);
    await within(5000, 'snapshot', ad.snapshot(out));
    expect(await n).to.be.greaterThan(0);
  });
});

describe('host files only root may read', () => {
  const tmp = tempDirs();
  after(() => tmp.cleanup());

  it('a chroot leaves out files others may not read; the alloc fs refuses a root-only hard link (root)', async function () {
    if (!isRoot()) return this.skip();
    const { embed } = await import('../../../actors/allocdir/chroot.ts');
    const ad = new AllocDir(await tmp.make('berth-hostile-etc-'), '7e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
    await ad.build();
    await ad.newTaskDir('web').build();
    try {
      // A fake /etc: a root-only file, a group-only one, a world-readable one.
      const etc = await tmp.make('berth-fake-etc-');
      await writeFile(path.join(etc, 'shadow'), 'root:$6$hash', { mode: 0o640 });
      await writeFile(path.join(etc, 'sudoers'), 'root ALL=(ALL) ALL', { mode: 0o440 });
      await mkdir(path.join(etc, 'ssh'));
      await writeFile(path.join(etc, 'ssh', 'ssh_host_ed25519_key'), 'PRIVATE', { mode: 0o600 });
      await writeFile(path.join(etc, 'ssh', 'ssh_host_ed25519_key.pub'), 'PUBLIC', { mode: 0o644 });
      await writeFile(path.join(etc, 'passwd'), 'root:x:0:0', { mode: 0o644 });
      fs.chmodSync(path.join(etc, 'shadow'), 0o640);
      fs.chmodSync(path.join(etc, 'sudoers'), 0o440);
      fs.chmodSync(path.join(etc, 'ssh', 'ssh_host_ed25519_key'), 0o600);
      const taskDir = path.join(ad.dir, 'web');
      await embed(taskDir, { [etc]: '/etc' }, { skip: [] });
      const afs = createAllocFS(ad);
      const names = (await afs.list('web/etc')).map((e) => e.name);
      expect(names).to.include('passwd');
      expect(names).to.not.include('shadow');
      expect(names).to.not.include('sudoers');
      expect((await afs.list('web/etc/ssh')).map((e) => e.name)).to.deep.equal(['ssh_host_ed25519_key.pub']);
      // A chroot built before this rule: the hard link is there, and still not served.
      fs.linkSync(path.join(etc, 'shadow'), path.join(taskDir, 'etc', 'shadow'));
      const e = await errorOf(afs.readAt('web/etc/shadow', 0, 100));
      expect(e).to.be.instanceOf(AllocFSError);
      expect((e as AllocFSError).code).to.equal('EACCES');
      expect(await errorOf(drain(afs.stream('web/etc/shadow')))).to.be.instanceOf(AllocFSError);
      expect((await afs.readAt('web/etc/passwd', 0, 100)).toString()).to.equal('root:x:0:0');
    } finally {
      await ad.destroy();
    }
  });
});
