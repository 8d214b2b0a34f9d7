/**
 * Snapshots for remote migration: the tar an alloc dir serves (`AllocDir.snapshot`, Nomad's
 * `AllocDir.Snapshot`) and the streaming unpacker on the receiving side (`restoreSnapshot`,
 * Nomad's `streamAllocDir`), hardened: nothing is ever written outside the destination or through
 * a symlink, and a failed restore leaves nothing behind.
 * @module
 */
import { constants as fsc } from 'node:fs';
import type { Stats } from 'node:fs';
import { chmod, chown, lchown, lstat, mkdir, open, readdir, readlink, realpath, rmdir, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Header, Parser, Pax, type HeaderData, type ReadEntry } from 'tar';
import { AllocDirNotBuiltError, BerthError, SnapshotEscapeError, SnapshotRemoteError } from '../../model/errors.ts';
import type { RwLock } from './lock.ts';
import { SnapshotStreamError } from './errors.ts';
import { isNotFound, pathEscapesAllocDir, pathEscapesAllocViaRelative, symlinkEscapes, symlinkInParentChain } from './escape.ts';
import { isRoot } from './perms.ts';

/** Nomad's `SnapshotErrorTime`: Go normalises `time.Date(2000, 0, 0, ...)` to this. */
export const SNAPSHOT_ERROR_TIME = new Date('1999-11-30T00:00:00Z');

/** Name of the entry a failed snapshot ends with: `NOMAD-<allocId>-ERROR.log`. */
export function snapshotErrorFilename(allocId: string): string {
  return `NOMAD-${allocId}-ERROR.log`;
}

const OBJECT_ESCAPES = 'archive contains object that escapes alloc dir';
const SYMLINK_ESCAPES = 'archive contains symlink that escapes alloc dir';
const BLOCK = 512;
const CHUNK = 64 * 1024;

/** What the unpacker needs from an AllocDir (structural, so this file does not import it back). */
export interface SnapshotDest {
  readonly dir: string;
  readonly allocId: string;
  readonly built: boolean;
  readonly lock: RwLock;
}

/** What the writer needs from an AllocDir. */
interface SnapshotSource {
  readonly dir: string;
  readonly allocId: string;
  tasks(): Array<{ readonly name: string }>;
}

/** Writes to a stream, honouring backpressure; rejects once the stream fails or closes. */
class Out {
  #err: Error | undefined;
  #closed = false;
  #onError = (err: Error) => (this.#err ??= err);
  #onClose = () => (this.#closed = true);
  constructor(readonly stream: NodeJS.WritableStream) {
    stream.on('error', this.#onError);
    stream.on('close', this.#onClose);
  }
  get failed(): Error | undefined {
    return this.#err ?? (this.#gone() ? new Error('output closed') : undefined);
  }
  /** Closed or destroyed: some streams (http responses) then drop writes without an event. */
  #gone(): boolean {
    return this.#closed || (this.stream as { destroyed?: boolean }).destroyed === true;
  }
  async write(buf: Buffer): Promise<void> {
    if (this.failed) throw this.failed;
    const ok = this.stream.write(buf, (err?: Error | null) => {
      if (err) this.#err ??= err;
    });
    if (ok) return;
    await new Promise<void>((resolve, reject) => {
      const s = this.stream;
      const done = () => {
        s.removeListener('drain', done);
        s.removeListener('error', done);
        s.removeListener('close', done);
        const f = this.failed;
        if (f) reject(f);
        else resolve();
      };
      if (this.failed) return done();
      s.once('drain', done);
      s.once('error', done);
      s.once('close', done);
    });
  }
  end(): void {
    this.stream.end();
  }
  release(): void {
    this.stream.removeListener('close', this.#onClose);
    // Keep swallowing late errors: an unhandled 'error' would crash the host.
    this.stream.removeListener('error', this.#onError);
    this.stream.on('error', () => undefined);
  }
}

/** Header (plus a pax header when names are long) for one entry. */
function headerBlocks(data: HeaderData): Buffer {
  const h = new Header(data);
  const needPax = h.encode();
  if (!needPax) return h.block!;
  const pax = new Pax({ path: data.path, linkpath: data.linkpath, mtime: data.mtime, uid: data.uid, gid: data.gid, size: data.size });
  return Buffer.concat([pax.encode(), h.block!]);
}

function pad(size: number): Buffer {
  const rem = size % BLOCK;
  return Buffer.alloc(rem === 0 ? 0 : BLOCK - rem);
}

/**
 * Writes the tar of `alloc/data` then each task's `local/` to `out` (entry names relative to
 * the alloc dir, one header per root too; symlinks keep their target text; sockets, fifos and
 * devices are left out), then ends `out`. On a walk error it appends
 * `NOMAD-<allocId>-ERROR.log` (mode 0666, `Error snapshotting: <err>`), ends `out`, and rejects.
 * Used by `AllocDir.snapshot`, which holds the alloc dir's lock around it.
 */
export async function writeSnapshot(src: SnapshotSource, out: NodeJS.WritableStream): Promise<void> {
  const w = new Out(out);
  const roots = ['alloc/data', ...src.tasks().map((t) => `${t.name}/local`)];
  try {
    let walkError: BerthError | undefined;
    for (const root of roots) {
      try {
        await walk(src.dir, root, w);
      } catch (err) {
        if (w.failed) throw w.failed;
        walkError = new SnapshotStreamError(`failed to snapshot ${root}: ${(err as Error).message}`, { cause: err });
        break;
      }
    }
    if (walkError) {
      const body = Buffer.from(`Error snapshotting: ${walkError.message.replace(/^failed to snapshot [^:]*: /, '')}`);
      await w.write(
        headerBlocks({
          path: snapshotErrorFilename(src.allocId),
          mode: 0o666,
          size: body.length,
          type: 'File',
          mtime: SNAPSHOT_ERROR_TIME,
          atime: SNAPSHOT_ERROR_TIME,
          ctime: SNAPSHOT_ERROR_TIME,
        }),
      );
      await w.write(Buffer.concat([body, pad(body.length)]));
    }
    await w.write(Buffer.alloc(2 * BLOCK)); // end of archive
    w.end();
    if (walkError) throw walkError;
  } catch (err) {
    if (err instanceof BerthError) throw err;
    throw new SnapshotStreamError(`failed to write snapshot of ${src.dir}: ${(err as Error).message}`, { cause: err });
  } finally {
    if (w.failed) out.end();
    w.release();
  }
}

/** Depth-first, in name order (like Go's filepath.Walk), never following a link. */
async function walk(base: string, rel: string, w: Out): Promise<void> {
  const abs = path.join(base, rel);
  const st = await lstat(abs);
  const common = { path: rel, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, mtime: st.mtime };
  if (st.isDirectory()) {
    await w.write(headerBlocks({ ...common, type: 'Directory', size: 0 }));
    const names = (await readdir(abs)).sort();
    for (const name of names) await walk(base, `${rel}/${name}`, w);
  } else if (st.isSymbolicLink()) {
    await w.write(headerBlocks({ ...common, type: 'SymbolicLink', size: 0, linkpath: await readlink(abs) }));
  } else if (st.isFile()) {
    await w.write(headerBlocks({ ...common, type: 'File', size: st.size }));
    await writeBody(abs, st, w);
  }
  // sockets, fifos and devices carry no data worth migrating
}

async function writeBody(abs: string, st: Stats, w: Out): Promise<void> {
  const fh = await open(abs, fsc.O_RDONLY | fsc.O_NOFOLLOW);
  let left = st.size;
  try {
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, left));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) {
        // The file shrank: finish the entry with zeros so the archive stays readable, then fail.
        await w.write(Buffer.concat([Buffer.alloc(left), pad(st.size)]));
        throw new Error(`${abs} changed size while being read`);
      }
      await w.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
      left -= bytesRead;
    }
  } finally {
    await fh.close();
  }
  await w.write(pad(st.size));
}

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions {
  /** The allocation the snapshot came from (names its error entry). */
  prevAllocId: string;
  /** Stops the restore between entries and between body chunks; rejects with its reason. */
  signal?: AbortSignal;
}

/**
 * Unpacks a snapshot stream into `dest.dir` (`dest` must be built), one entry at a time and
 * with backpressure (the input is paused while an entry is written).
 *
 * - Directories, regular files and symlinks are restored with their modes (explicit chmod) and,
 *   as root, their owners; hard links, devices and fifos are ignored.
 * - Refused with {@link SnapshotEscapeError}: absolute names, names escaping with `..`, entries
 *   whose parent chain holds a symlink (nothing is written through a link, even one planted by
 *   an earlier entry), and symlinks whose target is absolute or points outside.
 * - `NOMAD-<prevAllocId>-ERROR.log` becomes a {@link SnapshotRemoteError} carrying its text.
 * - On any failure (including cancellation) everything it created is removed again.
 *
 * @throws AllocDirNotBuiltError when `dest` is not built.
 */
export function restoreSnapshot(input: NodeJS.ReadableStream, dest: SnapshotDest, opts: RestoreSnapshotOptions): Promise<void> {
  if (!dest.built) return Promise.reject(new AllocDirNotBuiltError(dest.dir));
  return dest.lock.shared(() => new Restore(input, dest, opts).run());
}

/** One restore: the input pump, the entry loop, and what to undo. */
class Restore {
  readonly #input: NodeJS.ReadableStream;
  readonly #dest: SnapshotDest;
  readonly #opts: RestoreSnapshotOptions;
  readonly #parser = new Parser({ strict: true });
  readonly #entries: ReadEntry[] = [];
  #ended = false;
  #failure: { err: unknown } | undefined;
  #wake: (() => void) | undefined;
  /** Rejects the body read in flight: wakes one stalled on input that never comes. */
  #stopBody: ((err: unknown) => void) | undefined;
  #base = '';
  /** Paths created, in order; removed in reverse on failure. */
  readonly #created: string[] = [];
  /** Existing directories whose mode was changed, to put back on failure. */
  readonly #chmodded: Array<[string, number]> = [];

  constructor(input: NodeJS.ReadableStream, dest: SnapshotDest, opts: RestoreSnapshotOptions) {
    this.#input = input;
    this.#dest = dest;
    this.#opts = opts;
  }

  #streamError(err: unknown): SnapshotStreamError {
    const m = err instanceof Error ? err.message : String(err);
    return new SnapshotStreamError(`error streaming previous alloc ${JSON.stringify(this.#opts.prevAllocId)} for new alloc ${JSON.stringify(this.#dest.allocId)}: ${m}`, { cause: err });
  }

  #fail = (err: unknown) => {
    this.#failure ??= { err };
    this.#wake?.();
    this.#stopBody?.(this.#failure.err);
  };

  /** An entry's body chunks; throws the failure (abort, input error) even while waiting for one. */
  async *#body(entry: ReadEntry): AsyncGenerator<Buffer> {
    const it = (entry as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    for (;;) {
      if (this.#failure) throw this.#failure.err;
      const r = await new Promise<IteratorResult<Buffer>>((resolve, reject) => {
        this.#stopBody = reject;
        it.next().then(resolve, reject);
      }).finally(() => (this.#stopBody = undefined));
      if (r.done) return;
      yield r.value;
    }
  }

  #onData = (chunk: Buffer | string) => {
    if (this.#failure) return;
    if (!this.#parser.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) {
      // Backpressure: the current entry is not consumed yet.
      this.#input.pause();
      this.#parser.once('drain', () => {
        if (!this.#failure) this.#input.resume();
      });
    }
  };
  #onEnd = () => this.#parser.end();
  #onInputError = (err: Error) => this.#fail(this.#streamError(err));

  async run(): Promise<void> {
    const { signal } = this.#opts;
    const onAbort = () => this.#fail(signal!.reason);
    try {
      if (signal?.aborted) throw signal.reason;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#base = await realpath(this.#dest.dir);
      this.#parser.on('entry', (e: ReadEntry) => {
        this.#entries.push(e);
        this.#wake?.();
      });
      this.#parser.on('error', (err: Error) => this.#fail(this.#streamError(err)));
      this.#parser.on('end', () => {
        this.#ended = true;
        this.#wake?.();
      });
      this.#input.on('data', this.#onData);
      this.#input.on('end', this.#onEnd);
      this.#input.on('error', this.#onInputError);
      this.#input.resume();
      for (;;) {
        const entry = await this.#next();
        if (!entry) break;
        await this.#handle(entry);
      }
      if (this.#failure) throw this.#failure.err;
    } catch (err) {
      this.#fail(err);
      this.#stopInput();
      await this.#undo();
      throw this.#failure!.err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#stopInput();
    }
  }

  /** The next entry, undefined at the end; throws the failure (abort, parse error) if any. */
  async #next(): Promise<ReadEntry | undefined> {
    for (;;) {
      if (this.#failure) throw this.#failure.err;
      const e = this.#entries.shift();
      if (e) return e;
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  #stopInput(): void {
    this.#input.removeListener('data', this.#onData);
    this.#input.removeListener('end', this.#onEnd);
    this.#input.removeListener('error', this.#onInputError);
    if (this.#failure) this.#input.pause(); // stop consuming; the caller owns the stream
    this.#parser.removeAllListeners('error');
    this.#parser.on('error', () => undefined);
  }

  async #handle(entry: ReadEntry): Promise<void> {
    const name = entry.path;
    if (name.startsWith('/') || path.isAbsolute(name) || pathEscapesAllocViaRelative('', name)) throw new SnapshotEscapeError(OBJECT_ESCAPES);
    const prevErr = snapshotErrorFilename(this.#opts.prevAllocId);
    if (name === prevErr) {
      const body = (await readAll(this.#body(entry), 64 * 1024)).toString('utf8');
      throw new SnapshotRemoteError(
        `error streaming previous alloc ${JSON.stringify(this.#opts.prevAllocId)} for new alloc ${JSON.stringify(this.#dest.allocId)}: ${body}`,
        body,
      );
    }
    const rel = path.posix.normalize(name).replace(/\/+$/, '');
    const type = entry.type;
    const kind = type === 'Directory' || type === 'GNUDumpDir' ? 'dir'
      : type === 'File' || type === 'OldFile' || type === 'ContiguousFile' ? 'file'
      : type === 'SymbolicLink' ? 'symlink'
      : undefined;
    if (!kind || rel === '.' || rel === '') {
      entry.resume(); // hard links, devices, fifos, the root itself: ignored
      return;
    }
    const target = path.join(this.#base, rel);
    // Nothing is ever written through a symlink, even one this stream planted earlier.
    if (await symlinkInParentChain(this.#base, rel)) throw new SnapshotEscapeError(OBJECT_ESCAPES);
    if (await pathEscapesAllocDir(this.#base, '', rel)) throw new SnapshotEscapeError(OBJECT_ESCAPES);
    const mode = (entry.mode ?? 0o644) & 0o7777;
    const own = isRoot() && entry.uid !== undefined && entry.gid !== undefined;

    if (kind === 'dir') {
      entry.resume();
      const existing = await lstatOrUndefined(target);
      if (existing && !existing.isDirectory()) throw this.#streamError(new Error(`${rel} exists and is not a directory`));
      await this.#mkdirs(path.dirname(rel));
      if (!existing) {
        await mkdir(target, { mode: 0o700 });
        this.#created.push(target);
      } else if ((existing.mode & 0o7777) !== mode) {
        this.#chmodded.push([target, existing.mode & 0o7777]);
      }
      if (own) await chown(target, entry.uid!, entry.gid!);
      await chmod(target, mode);
      return;
    }

    if (kind === 'symlink') {
      entry.resume();
      const linkpath = entry.linkpath ?? '';
      if (symlinkEscapes(this.#base, target, linkpath)) throw new SnapshotEscapeError(SYMLINK_ESCAPES);
      await this.#mkdirs(path.dirname(rel));
      await this.#removeExisting(target);
      await symlink(linkpath, target);
      this.#created.push(target);
      if (own) await lchown(target, entry.uid!, entry.gid!);
      return;
    }

    // Regular file: replace whatever is there (a planted symlink included), never open through it.
    await this.#mkdirs(path.dirname(rel));
    await this.#removeExisting(target);
    const fh = await open(target, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600);
    this.#created.push(target);
    try {
      for await (const chunk of this.#body(entry)) {
        if (this.#failure) throw this.#failure.err; // cancelled mid-body
        await fh.write(chunk);
      }
      if (own) await fh.chown(entry.uid!, entry.gid!);
      await fh.chmod(mode); // explicit: the umask must not apply
    } finally {
      await fh.close();
    }
  }

  /** Creates the missing directories of `relDir` (tracked, so they are undone on failure). */
  async #mkdirs(relDir: string): Promise<void> {
    if (relDir === '.' || relDir === '') return;
    let cur = this.#base;
    for (const part of relDir.split('/')) {
      cur = path.join(cur, part);
      const st = await lstatOrUndefined(cur);
      if (st?.isDirectory()) continue;
      if (st) throw new SnapshotEscapeError(OBJECT_ESCAPES); // a link or file where a dir must be
      await mkdir(cur, { mode: 0o755 });
      this.#created.push(cur);
    }
  }

  async #removeExisting(target: string): Promise<void> {
    const st = await lstatOrUndefined(target);
    if (!st) return;
    try {
      if (st.isDirectory()) await rmdir(target);
      else await unlink(target);
    } catch (err) {
      throw this.#streamError(new Error(`error removing existing file: ${(err as Error).message}`));
    }
  }

  /** Removes what this restore created, newest first, and puts changed modes back. */
  async #undo(): Promise<void> {
    for (const p of this.#created.reverse()) {
      try {
        const st = await lstat(p);
        if (st.isDirectory()) await rmdir(p);
        else await unlink(p);
      } catch {
        /* already gone, or not ours to force */
      }
    }
    for (const [p, m] of this.#chmodded) await chmod(p, m).catch(() => undefined);
  }
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function readAll(entry: AsyncIterable<Buffer>, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of entry) {
    if (n < max) parts.push(c.subarray(0, max - n));
    n += c.length;
  }
  return Buffer.concat(parts);
}
