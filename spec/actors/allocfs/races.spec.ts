/**
 * What a task can change between the alloc fs's checks and its use of a path (a file swapped for
 * a symlink, a parent dir for a link out, a file truncated or removed), and how a follower waits.
 * Each race is won on purpose: a hook runs a real filesystem change at the exact step (through
 * the source's `tasks()`, which the checks call, or just before one `fs.promises` call), then the
 * real call goes ahead.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { appendFile, readdir, readlink, symlink, truncate, writeFile } from 'node:fs/promises';
import { getEventListeners, once } from 'node:events';
import path from 'node:path';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import {
  AllocFileNotFoundError,
  AllocFSError,
  AllocPathEscapeError,
  AllocSymlinkLoopError,
  createAllocFS,
  MAX_READ_AT_BYTES,
  type AllocFS,
} from '../../../actors/allocfs/index.ts';
import { tempDirs } from '../allocdir/helpers.ts';

type Fn = (...a: never[]) => unknown;

describe('alloc fs: races a task can win, and how a follower waits', () => {
  const tmp = tempDirs();
  let ad: AllocDir;
  let afs: AllocFS;
  let outside: string;
  let data: string;
  /** Runs once at the n-th call of the source's `tasks()` (the secrets check: before and after the open). */
  let onTasks: Map<number, () => void>;
  let tasksCalls: number;
  const undo: Array<() => void> = [];

  /** Replaces `obj[name]` until the test ends; `wrap` gets the real function. */
  function patch<T extends object, K extends keyof T>(obj: T, name: K, wrap: (real: T[K]) => T[K]): void {
    const real = obj[name];
    obj[name] = wrap(real);
    undo.push(() => (obj[name] = real));
  }

  /** Watchers `fs.watch` made during the test, with the path each watches. */
  function recordWatchers(): Array<{ path: string; watcher: fs.FSWatcher }> {
    const made: Array<{ path: string; watcher: fs.FSWatcher }> = [];
    patch(
      fs,
      'watch',
      (real) =>
        ((p: string, ...rest: never[]) => {
          const watcher = (real as Fn)(p as never, ...rest) as fs.FSWatcher;
          made.push({ path: p, watcher });
          return watcher;
        }) as never,
    );
    return made;
  }

  /** Counts `fs.promises.realpath(full)` calls that found nothing, and runs `at(n)` after the n-th. */
  function lookupsOf(full: string, at: (n: number) => void): { misses: number } {
    const seen = { misses: 0 };
    patch(
      fs.promises,
      'realpath',
      (real) =>
        (async (p: string, ...rest: never[]) => {
          try {
            return await (real as Fn)(p as never, ...rest);
          } catch (err) {
            if (p === full && (err as NodeJS.ErrnoException).code === 'ENOENT') at(++seen.misses);
            throw err;
          }
        }) as never,
    );
    return seen;
  }

  /** Runs `fn` once, right after the lookup (`realpath`) of `full` found it: the check-then-use window. */
  function afterLookupOf(full: string, fn: () => void): void {
    let done = false;
    patch(
      fs.promises,
      'realpath',
      (real) =>
        (async (p: string, ...rest: never[]) => {
          const found = await (real as Fn)(p as never, ...rest);
          if (p === full && !done) {
            done = true;
            fn();
          }
          return found;
        }) as never,
    );
  }

  /** Runs `act(path)` just before each `fs.promises[name]` call, then the real call goes ahead. */
  function beforeCall(name: 'open' | 'lstat' | 'readdir', act: (p: string) => void): void {
    patch(
      fs.promises,
      name,
      (real) =>
        (async (p: string, ...rest: never[]) => {
          act(p);
          return (real as Fn)(p as never, ...rest);
        }) as never,
    );
  }

  /** As where /proc is not mounted: an open fd's path cannot be read. */
  function noProc(): void {
    patch(
      fs.promises,
      'readlink',
      (real) =>
        (async (p: string, ...rest: never[]) => {
          if (String(p).startsWith('/proc/self/fd/')) throw Object.assign(new Error('ENOENT: no /proc'), { code: 'ENOENT' });
          return (real as Fn)(p as never, ...rest);
        }) as never,
    );
  }

  /** `data` becomes a link to `to` (the real dir kept aside as `data.old`). */
  const swapData = (to: string) => {
    fs.renameSync(data, data + '.old');
    fs.symlinkSync(to, data);
  };

  const fileHandleProto = async () => {
    const fh = await fs.promises.open(path.join(data, 'probe'), 'w');
    await fh.close();
    return Object.getPrototypeOf(fh) as { stat: (...a: never[]) => Promise<fs.Stats> };
  };
  const watchersAlive = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
  /** The open fds of this process that point at `file`. */
  const fdsOn = async (file: string) => {
    const out: string[] = [];
    for (const fd of await readdir('/proc/self/fd')) {
      const to = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
      if (to === file) out.push(fd);
    }
    return out;
  };

  beforeEach(async () => {
    ad = new AllocDir(await tmp.make('berth-fs-race-'), '9e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
    await ad.build();
    await ad.newTaskDir('web').build();
    onTasks = new Map();
    tasksCalls = 0;
    afs = createAllocFS({
      dir: ad.dir,
      tasks: () => {
        onTasks.get(++tasksCalls)?.();
        return ad.tasks();
      },
    });
    data = fs.realpathSync(path.join(ad.dir, 'alloc', 'data')); // the paths the alloc fs calls with
    outside = await tmp.make('berth-fs-race-out-');
    await writeFile(path.join(outside, 'passwd'), 'root:x:0:0');
  });
  afterEach(async () => {
    for (const u of undo.splice(0).reverse()) u();
    await ad.destroy();
  });
  after(() => tmp.cleanup());

  describe('a path changed between the checks and the open', () => {
    it('a file swapped for a symlink (even one pointing inside) is refused as an escape, not followed', async () => {
      await writeFile(path.join(data, 'f'), 'was here');
      await writeFile(path.join(data, 'g'), 'inside');
      onTasks.set(1, () => {
        fs.rmSync(path.join(data, 'f'));
        fs.symlinkSync('g', path.join(data, 'f'));
      });
      const err = await afs.readAt('alloc/data/f', 0, 100).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
      expect((err as Error).message).to.equal('Path escapes the alloc directory');
    });

    it('a symlink swapped in at the open itself (O_NOFOLLOW says ELOOP) is refused as an escape, not a loop', async () => {
      const f = path.join(data, 'f');
      await writeFile(f, 'was here');
      await writeFile(path.join(data, 'g'), 'inside');
      beforeCall('open', (p) => {
        if (p === f) {
          fs.rmSync(f);
          fs.symlinkSync('g', f);
        }
      });
      const err = await afs.readAt('alloc/data/f', 0, 100).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
      expect(err).to.not.be.instanceOf(AllocSymlinkLoopError);
    });

    it('a parent dir swapped for a link out is caught by the open file’s own path: refused, nothing read', async () => {
      await fs.promises.mkdir(path.join(data, 'd'));
      await writeFile(path.join(data, 'd', 'passwd'), 'mine');
      onTasks.set(1, () => {
        fs.renameSync(path.join(data, 'd'), path.join(data, 'd.old'));
        fs.symlinkSync(outside, path.join(data, 'd'));
      });
      const err = await afs.readAt('alloc/data/d/passwd', 0, 100).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
      expect(await fdsOn(path.join(outside, 'passwd'))).to.deep.equal([]);
    });

    it('where the open fd’s path cannot be read (no /proc), the file is still read', async () => {
      await writeFile(path.join(data, 'f'), 'plain');
      noProc();
      expect((await afs.readAt('alloc/data/f', 0, 100)).toString()).to.equal('plain');
    });

    it('stat of a file removed after the lookup is "not found"; a symlink loop swapped in is an escape', async () => {
      const f = path.join(data, 'f');
      await writeFile(f, 'x');
      let swap = () => fs.rmSync(f);
      afterLookupOf(f, () => swap());
      let err = await afs.stat('alloc/data/f').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocFileNotFoundError);
      expect((err as Error).message).to.equal('no such file or directory in the alloc dir: alloc/data/f');
      await writeFile(f, 'x');
      swap = () => {
        fs.rmSync(f);
        fs.symlinkSync('f', f);
      };
      afterLookupOf(f, () => swap());
      err = await afs.stat('alloc/data/f').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
    });

    it('stat: a parent swapped for a link out after the lookup is refused; nothing of the outside file is shown', async () => {
      await writeFile(path.join(data, 'passwd'), 'x');
      afterLookupOf(path.join(data, 'passwd'), () => swapData(outside)); // outside/passwd: 10 bytes
      const err = await afs.stat('alloc/data/passwd').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
      const top = await afs.stat('/');
      expect(top.isDir).to.equal(true);
    });

    it('an alloc dir that is itself a symlink loop is a loop error, not "not found"', async () => {
      const loop = path.join(outside, 'loop');
      await symlink('loop', loop);
      const looped = createAllocFS({ dir: loop, tasks: () => [] });
      const err = await looped.stat('x').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocSymlinkLoopError);
      expect((err as AllocFSError).code).to.equal('ELOOP');
    });
  });

  describe('list while the dir changes', () => {
    it('an entry removed between the listing and its lstat is left out; the rest come sorted', async () => {
      for (const n of ['mm', 'ZZ', 'zz', 'aa', 'gone', 'b']) await writeFile(path.join(data, n), n);
      const gone = path.join(data, 'gone');
      beforeCall('lstat', (p) => {
        if (path.basename(p) === 'gone') fs.rmSync(gone, { force: true });
      });
      expect((await afs.list('alloc/data')).map((e) => e.name)).to.deep.equal(['ZZ', 'aa', 'b', 'mm', 'zz']);
    });

    it('the dir swapped for a symlink loop while listing: what is listed is the dir opened, never the loop', async () => {
      await writeFile(path.join(data, 'a'), 'a');
      beforeCall('lstat', (p) => {
        if (path.basename(p) === 'a' && !fs.lstatSync(data).isSymbolicLink()) swapData('data');
      });
      const list = await afs.list('alloc/data');
      expect(list.map((e) => [e.name, e.size])).to.deep.equal([['a', 1]]);
      expect(fs.lstatSync(data).isSymbolicLink(), 'the swap happened').to.equal(true);
    });

    it('a parent swapped for a link out after the lookup is caught by the opened dir’s own path: refused, nothing listed or stat’ed', async () => {
      await fs.promises.mkdir(path.join(data, 'sub'));
      await writeFile(path.join(data, 'sub', 'f'), 'x');
      await fs.promises.mkdir(path.join(outside, 'sub'));
      await writeFile(path.join(outside, 'sub', 'f'), 'outside!!!');
      afterLookupOf(path.join(data, 'sub'), () => swapData(outside)); // the open follows a parent link: O_NOFOLLOW is for the last part
      expect(await afs.list('alloc/data/sub').catch((e: unknown) => e)).to.be.instanceOf(AllocPathEscapeError);
      fs.rmSync(data);
      fs.renameSync(data + '.old', data);
      afterLookupOf(path.join(data, 'sub', 'f'), () => swapData(outside));
      expect(await afs.stat('alloc/data/sub/f').catch((e: unknown) => e)).to.be.instanceOf(AllocPathEscapeError);
      expect(await fdsOn(path.join(outside, 'sub')), 'the dir opened outside is closed').to.deep.equal([]);
    });

    it('a dir removed after the lookup is "not found", for list and stat', async () => {
      await fs.promises.mkdir(path.join(data, 'gone'));
      afterLookupOf(path.join(data, 'gone'), () => fs.rmSync(path.join(data, 'gone'), { recursive: true }));
      const err = await afs.list('alloc/data/gone').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocFileNotFoundError);
      await fs.promises.mkdir(path.join(data, 'gone'));
      await writeFile(path.join(data, 'gone', 'f'), 'x');
      afterLookupOf(path.join(data, 'gone', 'f'), () => fs.rmSync(path.join(data, 'gone'), { recursive: true }));
      expect(await afs.stat('alloc/data/gone/f').catch((e: unknown) => e)).to.be.instanceOf(AllocFileNotFoundError);
    });

    it('no fd is left on the dir after a list or a stat, answered or refused', async () => {
      await writeFile(path.join(data, 'a'), 'a');
      await afs.list('alloc/data');
      await afs.stat('alloc/data/a');
      await afs.stat('/');
      await afs.stat('alloc/data/nope').catch(() => undefined);
      expect(await fdsOn(data)).to.deep.equal([]);
      expect(await fdsOn(ad.dir)).to.deep.equal([]);
    });

    describe('where an open fd’s path cannot be read (no /proc)', () => {
      beforeEach(() => noProc());

      it('list and stat work by the path as checked', async () => {
        await writeFile(path.join(data, 'a'), 'abc');
        expect((await afs.list('alloc/data')).map((e) => [e.name, e.size])).to.deep.equal([['a', 3]]);
        expect((await afs.stat('alloc/data/a')).size).to.equal(3);
        expect((await afs.stat('/')).isDir).to.equal(true);
      });

      it('a symlink out is refused by its resolved path alone: not listed, stat’ed or read', async () => {
        await symlink(outside, path.join(data, 'out'));
        for (const call of [() => afs.list('alloc/data/out'), () => afs.stat('alloc/data/out/passwd'), () => afs.readAt('alloc/data/out/passwd', 0, 100)])
          expect(await call().catch((e: unknown) => e)).to.be.instanceOf(AllocPathEscapeError);
      });

      it('the dir removed after its open is "not found"', async () => {
        beforeCall('readdir', (p) => {
          if (p === data) fs.rmSync(data, { recursive: true });
        });
        expect(await afs.list('alloc/data').catch((e: unknown) => e)).to.be.instanceOf(AllocFileNotFoundError);
      });

      it('the dir swapped for a symlink loop while listing is an escape, not a short listing', async () => {
        await writeFile(path.join(data, 'a'), 'a');
        await writeFile(path.join(data, 'b'), 'b');
        beforeCall('lstat', (p) => {
          if (p === path.join(data, 'a') && !fs.lstatSync(data).isSymbolicLink()) swapData('data');
        });
        expect(await afs.list('alloc/data').catch((e: unknown) => e)).to.be.instanceOf(AllocPathEscapeError);
      });
    });

    it('the dir swapped for a link out after the lookup is refused at its open, not listed', async () => {
      await writeFile(path.join(data, 'a'), 'a');
      afterLookupOf(data, () => swapData(outside));
      const err = await afs.list('alloc/data').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocPathEscapeError);
    });

    it('the dir swapped for a link out after its open is still the one listed: nothing of outside', async () => {
      await writeFile(path.join(data, 'a'), 'a');
      let swapped = false;
      beforeCall('readdir', () => {
        if (!swapped) {
          swapped = true;
          swapData(outside);
        }
      });
      const list = await afs.list('alloc/data');
      expect(swapped).to.equal(true);
      expect(list.map((e) => e.name)).to.deep.equal(['a']);
    });
  });

  describe('readAt', () => {
    it('a file truncated after the open gives what is left from the offset, read once, no fd kept', async () => {
      const f = path.join(data, 't');
      const body = Buffer.from(Array.from({ length: 100 }, (_, i) => 32 + i));
      await writeFile(f, body);
      onTasks.set(2, () => fs.truncateSync(f, 70)); // the second check runs with the file open
      const got = await afs.readAt('alloc/data/t', 40, 60);
      expect(got.equals(body.subarray(40, 70)), got.toString()).to.equal(true);
      expect(await fdsOn(f)).to.deep.equal([]);
    });

    it('a window of exactly the largest answer is read, one byte more is refused', async () => {
      const f = path.join(data, 'sparse');
      await writeFile(f, '');
      await truncate(f, MAX_READ_AT_BYTES + 1);
      expect((await afs.readAt('alloc/data/sparse', 1, MAX_READ_AT_BYTES)).length).to.equal(MAX_READ_AT_BYTES);
      const err = await afs.readAt('alloc/data/sparse', 0, MAX_READ_AT_BYTES + 1).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocFSError);
      expect(await fdsOn(f)).to.deep.equal([]);
    });
  });

  describe('stream', () => {
    const collect = async (it: AsyncIterable<Buffer>, onChunk?: (text: string) => boolean | void) => {
      let text = '';
      for await (const c of it) {
        text += c.toString();
        if (onChunk?.(text)) break;
      }
      return text;
    };

    it('an already aborted signal ends it quietly before any lookup, even for a missing or secret path', async () => {
      const ctl = new AbortController();
      ctl.abort();
      const watchers = recordWatchers();
      expect(await collect(afs.stream('alloc/data/none', { signal: ctl.signal }))).to.equal('');
      expect(await collect(afs.stream('web/secrets/x', { follow: true, signal: ctl.signal }))).to.equal('');
      expect(watchers).to.deep.equal([]);
      expect(getEventListeners(ctl.signal, 'abort')).to.deep.equal([]);
    });

    it('without follow no watcher is made, and its abort listener goes when it ends', async () => {
      await writeFile(path.join(data, 'f'), 'abc');
      const watchers = recordWatchers();
      const ctl = new AbortController();
      expect(await collect(afs.stream('alloc/data/f', { signal: ctl.signal }))).to.equal('abc');
      expect(watchers).to.deep.equal([]);
      expect(getEventListeners(ctl.signal, 'abort')).to.deep.equal([]);
    });

    it('waiting for a missing file: two look-ups, one watcher on its dir that keeps no process alive, asleep until aborted', async () => {
      const watchers = recordWatchers();
      const ctl = new AbortController();
      const before = watchersAlive();
      let alive = -1;
      const lookups = lookupsOf(path.join(data, 'later'), (n) => {
        if (n === 2)
          setImmediate(() => {
            alive = watchersAlive();
            ctl.abort();
          });
      });
      expect(await collect(afs.stream('alloc/data/later', { follow: true, signal: ctl.signal }))).to.equal('');
      expect(lookups.misses).to.equal(2);
      expect(watchers.map((w) => w.path)).to.deep.equal([data]);
      expect(alive).to.equal(before);
      expect(getEventListeners(ctl.signal, 'abort')).to.deep.equal([]);
    });

    it('waiting without a signal: a watcher error only makes it look again; the file, once there, is read', async () => {
      const watchers = recordWatchers();
      const file = path.join(data, 'later');
      const lookups = lookupsOf(file, (n) => {
        if (n === 2) setImmediate(() => watchers[0]!.watcher.emit('error', new Error('watch failed')));
        if (n === 3) setImmediate(() => fs.writeFileSync(file, 'hello'));
      });
      expect(await collect(afs.stream('alloc/data/later', { follow: true }), (t) => t === 'hello')).to.equal('hello');
      expect(lookups.misses).to.equal(3);
    });

    it('waiting for a file in a dir that turns into a symlink loop is a loop error', async () => {
      const d = path.join(data, 'd');
      await fs.promises.mkdir(d);
      lookupsOf(path.join(d, 'f'), (n) => {
        if (n === 1) {
          fs.renameSync(d, d + '.old');
          fs.symlinkSync('d', d);
        }
      });
      const err = await collect(afs.stream('alloc/data/d/f', { follow: true, signal: new AbortController().signal })).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AllocSymlinkLoopError);
    });

    /** Runs `after()` after each `FileHandle.stat` (a follower's look at its file's size). */
    async function afterEachHandleStat(after: () => void): Promise<void> {
      patch(
        await fileHandleProto(),
        'stat',
        (real) =>
          async function (this: unknown, ...a: never[]) {
            const st = await (real as Fn).apply(this, a);
            after();
            return st as fs.Stats;
          },
      );
    }

    /** Follows `alloc/data/log` (holding "one"); `idle(n)` runs after the n-th look at its size once it is idle. */
    async function followIdle(idle: (n: number, ctl: AbortController) => void) {
      await writeFile(path.join(data, 'log'), 'one\n');
      const ctl = new AbortController();
      let started = false;
      let stats = 0;
      await afterEachHandleStat(() => {
        if (started) idle(++stats, ctl);
      });
      const text = await collect(afs.stream('alloc/data/log', { follow: true, signal: ctl.signal }), () => void (started = true));
      return { text, stats };
    }

    it('following an idle file: one look at its size, then asleep (no process kept alive) until aborted', async () => {
      const watchers = recordWatchers();
      const before = watchersAlive();
      let alive = -1;
      const { text, stats } = await followIdle((n, ctl) => {
        if (n === 1)
          setImmediate(() => {
            alive = watchersAlive();
            ctl.abort();
          });
      });
      expect(text).to.equal('one\n');
      expect(stats).to.equal(1);
      expect(watchers.map((w) => w.path)).to.deep.equal([path.join(data, 'log')]);
      expect(alive).to.equal(before);
    });

    it('following: an error of the file’s watcher only wakes it to look again', async () => {
      const watchers = recordWatchers();
      const { text, stats } = await followIdle((n, ctl) => {
        if (n === 1) setImmediate(() => watchers[0]!.watcher.emit('error', new Error('watch failed')));
        if (n === 2) setImmediate(() => ctl.abort());
      });
      expect(text).to.equal('one\n');
      expect(stats).to.equal(2);
    });

    it('an append seen while it was not asleep is not lost', async () => {
      const f = path.join(data, 'log');
      await writeFile(f, 'one\n');
      const proto = await fileHandleProto();
      const watchers = recordWatchers();
      let started = false;
      let appended = false;
      patch(
        proto,
        'stat',
        (real) =>
          async function (this: unknown, ...a: never[]) {
            if (started && !appended) {
              appended = true;
              // The change reaches the stream's watcher before this look returns: it must not sleep.
              const seen = once(watchers[0]!.watcher, 'change');
              await appendFile(f, 'two\n');
              await seen;
            }
            return (await (real as Fn).apply(this, a)) as fs.Stats;
          },
      );
      const text = await collect(afs.stream('alloc/data/log', { follow: true }), (t) => {
        started = true;
        return t === 'one\ntwo\n';
      });
      expect(text).to.equal('one\ntwo\n');
    });

    it('keeps following the file it opened when that is renamed away (and a new one takes its name)', async function () {
      this.timeout(5000); // a follower watching the new name instead never wakes
      const f = path.join(data, 'log');
      await writeFile(f, 'one\n');
      onTasks.set(2, () => {
        fs.renameSync(f, f + '.1');
        fs.writeFileSync(f, 'new file\n');
      });
      let started = false;
      let stats = 0;
      await afterEachHandleStat(() => {
        // Appended once the stream is asleep: only its watcher can tell it.
        if (started && ++stats === 1) setImmediate(() => fs.appendFileSync(f + '.1', 'two\n'));
      });
      const text = await collect(afs.stream('alloc/data/log', { follow: true }), (t) => {
        started = true;
        return t === 'one\ntwo\n';
      });
      expect(text).to.equal('one\ntwo\n');
    });
  });
});
