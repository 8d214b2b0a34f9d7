/**
 * Snapshots for remote migration: the tar an alloc dir serves (`AllocDir.snapshot`, Nomad's
 * `AllocDir.Snapshot`) and the streaming unpacker on the receiving side (`restoreSnapshot`,
 * Nomad's `streamAllocDir`, in restore.ts: nothing is ever written outside the destination or
 * through a symlink, and a failed restore leaves the destination as it was).
 * @module
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { Header, Pax, type HeaderData } from 'tar';
import { BerthError } from '../../model/errors.ts';
import { SnapshotStreamError } from './errors.ts';
import { openRegularFile } from './safe-open.ts';
import { errorText } from '../../model/error-text.ts';

export {
  restoreSnapshot,
  MAX_HEADER_BYTES,
  MAX_NAME_BYTES,
  MAX_PATH_BYTES,
  DEFAULT_MAX_ENTRIES,
  type RestoreSnapshotOptions,
  type RestoreSnapshotResult,
} from './restore.ts';

/** Nomad's `SnapshotErrorTime`: Go normalises `time.Date(2000, 0, 0, ...)` to this. */
export const SNAPSHOT_ERROR_TIME = new Date('1999-11-30T00:00:00Z');

/** Name of the entry a failed snapshot ends with: `NOMAD-<allocId>-ERROR.log`. */
export function snapshotErrorFilename(allocId: string): string {
  return `NOMAD-${allocId}-ERROR.log`;
}

const BLOCK = 512;
/** Read size of a large body: big enough that a 1 GB file is a thousand reads, not sixteen thousand. */
const CHUNK = 1024 * 1024;

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
        walkError = new SnapshotStreamError(`failed to snapshot ${root}: ${errorText(err)}`, { cause: err });
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
    throw new SnapshotStreamError(`failed to write snapshot of ${src.dir}: ${errorText(err)}`, { cause: err });
  } finally {
    if (w.failed) out.end();
    w.release();
  }
}

/** Small bodies are read whole, ahead of the writer; larger ones are streamed in {@link CHUNK}s. */
const SMALL_BODY = 256 * 1024;
/** Entries of one directory looked at (lstat, small bodies read) ahead of the one being written. */
const READ_AHEAD = 8;

/** One entry of a directory: its stat and, for a small file, its body being read already. */
interface Prepared {
  rel: string;
  abs: string;
  st: Stats;
  body?: Promise<Buffer>;
}

/** lstat (and a small file's body) of `rel`; a body that fails is judged when it is written. */
async function prepare(base: string, rel: string): Promise<Prepared> {
  const abs = path.join(base, rel);
  const st = await lstat(abs);
  const p: Prepared = { rel, abs, st };
  if (st.isFile() && st.size <= SMALL_BODY) {
    p.body = readSmall(abs, st.size);
    p.body.catch(() => undefined); // judged when written
  }
  return p;
}

/** Reads up to `size` bytes of a file (never through a link); fewer when it shrank meanwhile. */
async function readSmall(abs: string, size: number): Promise<Buffer> {
  // Never a blocking open: a FIFO swapped in after the lstat is refused, not waited on.
  const { fh } = await openRegularFile(abs, { noFollow: true });
  try {
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await fh.read(buf, got, size - got, null);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

/**
 * Depth-first, in name order (like Go's filepath.Walk), never following a link. The entries of a
 * directory are prepared up to {@link READ_AHEAD} ahead of the writer, so the thread pool reads
 * the next files while the current one goes out (one entry at a time cost several sequential
 * thread-pool round trips, and the socket sat idle meanwhile).
 */
async function walk(base: string, rel: string, w: Out, prepared?: Prepared): Promise<void> {
  const e = prepared ?? (await prepare(base, rel));
  const { st, abs } = e;
  const common = { path: rel, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, mtime: st.mtime };
  if (st.isDirectory()) {
    await w.write(headerBlocks({ ...common, type: 'Directory', size: 0 }));
    const names = (await readdir(abs)).sort();
    const ahead: Array<Promise<Prepared>> = [];
    let next = 0;
    const fill = () => {
      while (next < names.length && ahead.length < READ_AHEAD) {
        const p = prepare(base, `${rel}/${names[next++]}`);
        p.catch(() => undefined); // judged in order, below
        ahead.push(p);
      }
    };
    fill();
    while (ahead.length) {
      const child = await ahead.shift()!;
      fill();
      await walk(base, child.rel, w, child);
    }
  } else if (st.isSymbolicLink()) {
    await w.write(headerBlocks({ ...common, type: 'SymbolicLink', size: 0, linkpath: await readlink(abs) }));
  } else if (st.isFile()) {
    await w.write(headerBlocks({ ...common, type: 'File', size: st.size }));
    if (e.body) await writeSmallBody(abs, st, await e.body, w);
    else await writeBody(abs, st, w);
  }
  // sockets, fifos and devices carry no data worth migrating
}

/** A body read ahead: written with its padding in one go. */
async function writeSmallBody(abs: string, st: Stats, body: Buffer, w: Out): Promise<void> {
  if (body.length < st.size) {
    // The file shrank: finish the entry with zeros so the archive stays readable, then fail.
    await w.write(Buffer.concat([body, Buffer.alloc(st.size - body.length), pad(st.size)]));
    throw new Error(`${abs} changed size while being read`);
  }
  await w.write(st.size % BLOCK === 0 ? body : Buffer.concat([body, pad(st.size)]));
}

/** A large body, streamed: the next chunk is read while the current one is written. */
async function writeBody(abs: string, st: Stats, w: Out): Promise<void> {
  const { fh } = await openRegularFile(abs, { noFollow: true });
  let left = st.size;
  const readChunk = () => {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, left));
    return fh.read(buf, 0, buf.length, null).then(({ bytesRead }) => (bytesRead === buf.length ? buf : buf.subarray(0, bytesRead)));
  };
  let pending: Promise<Buffer> | undefined;
  try {
    pending = readChunk();
    while (left > 0) {
      const chunk = await pending!;
      pending = undefined;
      if (chunk.length === 0) {
        await w.write(Buffer.concat([Buffer.alloc(left), pad(st.size)]));
        throw new Error(`${abs} changed size while being read`);
      }
      left -= chunk.length;
      if (left > 0) pending = readChunk();
      await w.write(chunk);
    }
  } finally {
    await pending?.catch(() => undefined);
    await fh.close();
  }
  await w.write(pad(st.size));
}
