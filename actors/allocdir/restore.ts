/**
 * `restoreSnapshot`: unpacks a snapshot (Nomad's `streamAllocDir`) so that, by construction,
 * nothing is written outside the destination, nothing is written through a symlink, no
 * privilege travels with the data, and a failure leaves the destination as it was.
 *
 * ```
 * input ─► [gunzip, only when asked] ─► sniff: compressed but not asked? refuse
 *       ─► tar parser (strict; headers ≤ 64 KiB)
 *   each entry ─► bounds (count, name and link length, total bytes)
 *              ─► only alloc/data/… and <task>/local/… (the snapshot's own roots)
 *              ─► written into <dest>/.restore-XXXXXX/t: a fresh 0700 dir that no symlink
 *                 points into, holding no symlink while entries are written
 *   end ─► create the symlinks (after every file and dir)
 *       ─► merge into dest by rename; what is replaced is kept aside (journal)
 *       ─► resolve every symlink in the finished tree; any one outside: undo all, refuse
 *       ─► final dir modes and owners; drop the staging dir (and what was kept aside)
 *   any failure ─► undo the journal in reverse, drop the staging dir
 * ```
 *
 * Why this cannot write through a link, whatever the order of entries: Node has no `openat`, so
 * instead of opening relative to a verified directory handle the restore writes only into a
 * directory it just created privately, where it never creates a symlink before the last file is
 * closed. Every parent of every entry is known from the restore's own record of what it made (no
 * lstat race), and an entry below a link the archive declared is refused. The links are then
 * made, moved into place with the rest, and judged by how the kernel resolves them in the
 * finished destination ({@link resolveInTree}), not by their text.
 * @module
 */
import {
  constants as fsc,
  closeSync,
  fchmodSync,
  fchownSync,
  lstatSync,
  openSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  rmdirSync,
  chmodSync,
  lchownSync,
  symlinkSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import { mkdtemp, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { AllocDirNotBuiltError, BerthError, SnapshotEscapeError, SnapshotLimitError, SnapshotRemoteError } from '../../model/errors.ts';
import { taskNameProblem } from '../../model/parse.ts';
import type { RwLock } from './lock.ts';
import { SnapshotStreamError } from './errors.ts';
import { writeAll } from './write-all.ts';
import { isNotFound, resolveInTree } from './escape.ts';
import { isRoot, nobodyIds } from './perms.ts';
import { errorText, errorTextWithoutPath } from '../../model/error-text.ts';

const OBJECT_ESCAPES = 'archive contains object that escapes alloc dir';
const SYMLINK_ESCAPES = 'archive contains symlink that escapes alloc dir';

/** Linux's NAME_MAX: longest path component, in bytes. */
export const MAX_NAME_BYTES = 255;
/** Linux's PATH_MAX less the NUL: longest path (and symlink target), in bytes. */
export const MAX_PATH_BYTES = 4095;
/** Largest pax or long-name header accepted: far above any valid name, far below tar's 1 MiB. */
export const MAX_HEADER_BYTES = 64 * 1024;
/** Default bound on the number of entries in one snapshot. */
export const DEFAULT_MAX_ENTRIES = 1_000_000;
/** With maxBytes, the tar stream may exceed it by this much (or by maxBytes) for headers and padding. */
const STREAM_ALLOWANCE = 64 * 1024 * 1024;
/** Bodies up to this size are read whole, then written by one job on the thread pool. */
const SMALL_FILE = 256 * 1024;
/** Larger bodies are written in batches of at least this size. */
const WRITE_BATCH = 1024 * 1024;
/**
 * Writes kept in flight on the thread pool while the parser reads on. Creating a file is the
 * slow part of a restore (ms each on a busy disk) and a sequential restore left the network and
 * the parser idle meanwhile; a few in flight overlap it with the transfer and with each other.
 */
const MAX_WRITES_IN_FLIGHT = 8;
/** Body bytes held by writes in flight. */
const MAX_BYTES_IN_FLIGHT = 8 * 1024 * 1024;

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions {
  /** The allocation the snapshot came from (names its error entry). */
  prevAllocId: string;
  /** Stops the restore between entries and between body chunks; rejects with its reason. */
  signal?: AbortSignal;
  /** Bound on the bytes of all file bodies ({@link SnapshotLimitError} `bytes` past it). Default: none. */
  maxBytes?: number;
  /** Bound on the number of entries. Default `DEFAULT_MAX_ENTRIES` (1,000,000). */
  maxEntries?: number;
  /** The input is gzip (the response said `Content-Encoding: gzip`). Otherwise compressed input is refused. */
  gzip?: boolean;
  /** Owner of everything restored, when berth runs as root. Default: `nobody`. Archive owners are never kept. */
  owner?: { uid: number; gid: number };
  /** Owner of what is restored under `<task>/`, by task name (the task's user); default `owner`. Never root. */
  taskOwners?: Record<string, { uid: number; gid: number }>;
  /**
   * Unpack an artifact instead of a snapshot: every entry goes below this path relative to
   * `dest.dir` (a task dir), whatever its name, with the same staging, bounds and refusals;
   * `label` names it in errors. Snapshot roots and the error log are not looked for. With
   * `writableBy` (the task's user, when berth is root), an entry is only created or replaced in
   * a dir of dest that user could write in (Unix permissions, sticky bit included): a root-owned
   * dir of the chroot is not written into on the user's behalf.
   */
  artifact?: { under: string; label: string; writableBy?: { uid: number; gid: number } };
}

/** What {@link restoreSnapshot} restored. */
export interface RestoreSnapshotResult {
  /** Entries read (ignored ones included). */
  entries: number;
  /** Bytes of file bodies written. */
  bytes: number;
  /** Paths (relative to the alloc dir) whose setuid/setgid bits were removed. */
  setuidStripped: string[];
}

/** What a restore needs of its destination alloc dir (structural: this file does not import it back). */
export interface RestoreDest {
  readonly dir: string;
  readonly allocId: string;
  readonly built: boolean;
  readonly lock: RwLock;
}

/**
 * Unpacks a snapshot stream into `dest.dir` (`dest` must be built), one entry at a time with
 * backpressure, through a private staging dir moved in only on success (see the module doc).
 *
 * - Only `alloc/data/…` and `<task>/local/…` are restored (what `AllocDir.snapshot` writes);
 *   anything else is refused with {@link SnapshotStreamError}. Hard links, devices and fifos
 *   are ignored.
 * - Modes are kept without setuid/setgid (listed in the result); owners are never taken from
 *   the archive: as root everything belongs to `opts.owner` (default `nobody`), what is under
 *   `<task>/` to `opts.taskOwners[task]` when given (never root).
 * - {@link SnapshotEscapeError}: absolute names, `..` out of the dir, an entry below a symlink,
 *   a write over a symlink in dest that points outside, and any symlink that resolves outside
 *   the alloc dir in the finished tree (chains of links included).
 * - {@link SnapshotLimitError}: more than `maxBytes` of bodies, more than `maxEntries` entries,
 *   names or link targets past Linux's limits, headers over 64 KiB.
 * - `NOMAD-<prevAllocId>-ERROR.log` becomes a {@link SnapshotRemoteError} carrying its text.
 * - On any failure (cancellation included) dest is left as it was and the staging dir removed.
 *
 * @throws AllocDirNotBuiltError when `dest` is not built.
 */
export function restoreSnapshot(input: NodeJS.ReadableStream, dest: RestoreDest, opts: RestoreSnapshotOptions): Promise<RestoreSnapshotResult> {
  if (!dest.built) return Promise.reject(new AllocDirNotBuiltError(dest.dir));
  return dest.lock.shared(() => new Restore(input, dest, opts).run());
}

type Kind = 'dir' | 'file' | 'link';

/** One step of the merge into dest, undone in reverse on failure. */
type JournalStep = { op: 'in'; dest: string } | { op: 'aside'; dest: string; kept: string } | { op: 'mkdir'; dest: string };

/** Name of the staging dir's tree (what gets merged) and of the dir holding replaced entries. */
const TREE = 't';
const KEPT = 'k';

/** Compression formats tar would otherwise unpack by itself: gzip, zstd. */
function looksCompressed(head: Buffer): boolean {
  return (head[0] === 0x1f && head[1] === 0x8b) || (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd);
}

/** One restore: the input pump, the staging writes, the merge and what to undo. */
class Restore {
  readonly #input: NodeJS.ReadableStream;
  readonly #dest: RestoreDest;
  readonly #opts: RestoreSnapshotOptions;
  readonly #parser = new Parser({ strict: true, maxMetaEntrySize: MAX_HEADER_BYTES });
  readonly #entries: ReadEntry[] = [];
  #source: NodeJS.ReadableStream;
  #gunzip: Gunzip | undefined;
  #head: Buffer | undefined = Buffer.alloc(0);
  #ended = false;
  #failure: { err: unknown } | undefined;
  #wake: (() => void) | undefined;
  /** Rejects the body read in flight: wakes one stalled on input that never comes. */
  #stopBody: ((err: unknown) => void) | undefined;

  /** Real path of dest.dir. */
  #base = '';
  /** The staging dir, `<dest>/.restore-XXXXXX`. */
  #staging = '';
  #tree = '';
  #owner: { uid: number; gid: number } | undefined;
  /** What this restore made in the staging tree, by path relative to the alloc dir. */
  readonly #kinds = new Map<string, Kind>();
  readonly #children = new Map<string, Set<string>>();
  /** Modes the archive gave directories (applied last, once nothing more is written in them). */
  readonly #dirModes = new Map<string, number>();
  /** Symlinks to create at the end: path → target text. */
  readonly #links = new Map<string, string>();
  /** Directories that already existed in dest and were merged into (their modes stay). */
  readonly #merged = new Set<string>();
  readonly #journal: JournalStep[] = [];
  #kept = 0;
  #count = 0;
  #bytes = 0;
  /** Tar bytes read (after gunzip), bounded when maxBytes is: headers and padding get an allowance. */
  #streamBytes = 0;
  readonly #stripped: string[] = [];
  /** File writes on the thread pool, by path; a later entry for the same path waits for its own. */
  readonly #writes = new Map<string, Promise<void>>();
  #bytesInFlight = 0;
  #writeFailure: { err: unknown } | undefined;

  constructor(input: NodeJS.ReadableStream, dest: RestoreDest, opts: RestoreSnapshotOptions) {
    this.#input = input;
    this.#source = input;
    this.#dest = dest;
    this.#opts = opts;
  }

  #streamError(err: unknown): SnapshotStreamError {
    const m = errorText(err);
    if (this.#opts.artifact) return new SnapshotStreamError(`error unpacking artifact ${this.#opts.artifact.label}: ${m}`, { cause: err });
    return new SnapshotStreamError(
      `error streaming previous alloc ${JSON.stringify(this.#opts.prevAllocId)} for new alloc ${JSON.stringify(this.#dest.allocId)}: ${m}`,
      { cause: err },
    );
  }

  /** A filesystem error as a named error: limits as {@link SnapshotLimitError}, the rest as stream errors. */
  #fsError(err: unknown, what: string): BerthError {
    if (err instanceof BerthError) return err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENAMETOOLONG') return new SnapshotLimitError(`${what}: name too long for this filesystem`, 'name');
    if (code === 'ELOOP') return this.#streamError(new Error(`${what}: too many levels of symbolic links`));
    return this.#streamError(new Error(`${what}: ${errorTextWithoutPath(err)}`)); // no host path: the text reaches API clients
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
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const max = this.#opts.maxBytes;
    this.#streamBytes += buf.length;
    if (max !== undefined && this.#streamBytes > max + Math.max(max, STREAM_ALLOWANCE)) {
      return this.#fail(
        new SnapshotLimitError(`snapshot stream exceeds ${max + Math.max(max, STREAM_ALLOWANCE)} bytes (headers and padding included)`, 'bytes'),
      );
    }
    if (this.#head) {
      // Hold the first bytes until it is clear the tar is not compressed (tar would unpack it silently).
      buf = Buffer.concat([this.#head, buf]);
      if (buf.length < 4) return void (this.#head = buf);
      this.#head = undefined;
      if (looksCompressed(buf)) {
        return this.#fail(
          this.#streamError(new Error(this.#opts.gzip ? 'snapshot is compressed twice' : 'snapshot is compressed but was not declared so (Content-Encoding)')),
        );
      }
    }
    if (!this.#parser.write(buf)) {
      // Backpressure: the current entry is not consumed yet.
      this.#source.pause();
      this.#parser.once('drain', () => {
        if (!this.#failure) this.#source.resume();
      });
    }
  };
  #onEnd = () => {
    if (this.#head?.length) this.#parser.write(this.#head);
    this.#head = undefined;
    this.#parser.end();
  };
  #onInputError = (err: Error) => this.#fail(this.#streamError(err));

  async run(): Promise<RestoreSnapshotResult> {
    const { signal } = this.#opts;
    const onAbort = () => this.#fail(signal!.reason);
    try {
      if (signal?.aborted) throw signal.reason;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#base = await realpath(this.#dest.dir);
      this.#owner = isRoot() ? (this.#opts.owner ?? (await nobodyIds())) : undefined;
      try {
        this.#staging = await mkdtemp(path.join(this.#base, '.restore-'));
        this.#tree = path.join(this.#staging, TREE);
        mkdirSync(this.#tree, { mode: 0o700 });
        mkdirSync(path.join(this.#staging, KEPT), { mode: 0o700 });
      } catch (err) {
        throw this.#fsError(err, 'staging dir'); // a full disk (no space, no inodes) at the start
      }
      this.#startInput();
      for (;;) {
        const entry = await this.#next();
        if (!entry) break;
        await this.#handle(entry);
      }
      if (this.#failure) throw this.#failure.err;
      await this.#allWritten();
      this.#makeLinks();
      // As root, modes and owners are set in the private staging tree, where nothing can swap a
      // dir for a link: nothing of dest's is chmodded or chowned. (Root can move dirs whatever
      // their modes; a non-root restore sets them after the merge, or it could not move them.)
      if (this.#owner) this.#finalModes(this.#tree, () => true);
      signal?.throwIfAborted();
      const before = await this.#linksBefore();
      await this.#merge();
      await this.#sweep(before);
      if (!this.#owner) this.#finalModes(this.#base, (rel) => !this.#merged.has(rel), 0o700);
      signal?.throwIfAborted();
      // Replaced entries go with it; as non-root a read-only dir kept aside needs its modes opened first.
      try {
        removeOurs(this.#staging);
      } catch {
        // best effort: the restore itself is done
      }
      return { entries: this.#count, bytes: this.#bytes, setuidStripped: [...this.#stripped] };
    } catch (err) {
      this.#fail(err);
      this.#stopInput();
      await this.#settleWrites(); // nothing may land in the staging dir after it is removed
      this.#undo();
      throw this.#failure!.err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#stopInput();
    }
  }

  #startInput(): void {
    this.#parser.on('entry', (e: ReadEntry) => {
      this.#entries.push(e);
      this.#wake?.();
    });
    this.#parser.on('ignoredEntry', (e: ReadEntry) => {
      if (e.meta) this.#fail(new SnapshotLimitError(`archive header of ${e.size} bytes exceeds ${MAX_HEADER_BYTES}`, 'header'));
    });
    this.#parser.on('error', (err: Error) => this.#fail(this.#streamError(err)));
    this.#parser.on('end', () => {
      this.#ended = true;
      this.#wake?.();
    });
    if (this.#opts.gzip) {
      const gz = createGunzip();
      this.#gunzip = gz;
      gz.on('error', (err) => this.#fail(this.#streamError(new Error(`bad gzip body: ${err.message}`))));
      this.#input.on('error', this.#onInputError);
      this.#input.pipe(gz);
      this.#source = gz;
    } else {
      this.#input.on('error', this.#onInputError);
    }
    this.#source.on('data', this.#onData);
    this.#source.on('end', this.#onEnd);
    this.#source.resume();
    // An input that failed or was cut before these listeners existed emits nothing more: say so
    // now, or the restore would wait for data that never comes.
    const early = this.#input as Partial<Readable>;
    if (early.errored) this.#onInputError(early.errored);
    else if (early.destroyed && !early.readableEnded) this.#onInputError(new Error('the input closed before the restore began'));
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
    this.#source.removeListener('data', this.#onData);
    this.#source.removeListener('end', this.#onEnd);
    this.#input.removeListener('error', this.#onInputError);
    if (this.#gunzip) {
      this.#input.unpipe(this.#gunzip);
      this.#gunzip.destroy();
      this.#gunzip = undefined;
    }
    if (this.#failure) this.#input.pause(); // stop consuming; the caller owns the stream
    this.#parser.removeAllListeners('error');
    this.#parser.on('error', () => undefined);
  }

  /** Checks an entry's name; returns its clean relative path, or undefined for one to skip. */
  #checkName(name: string, kind: Kind | undefined): string | undefined {
    if (Buffer.byteLength(name) > MAX_PATH_BYTES)
      throw new SnapshotLimitError(`archive entry name of ${Buffer.byteLength(name)} bytes exceeds ${MAX_PATH_BYTES}`, 'name');
    if (name.startsWith('/') || path.isAbsolute(name) || name.includes('\0')) throw new SnapshotEscapeError(OBJECT_ESCAPES);
    const rel = path.posix.normalize(name).replace(/\/+$/, '');
    if (rel === '..' || rel.startsWith('../')) throw new SnapshotEscapeError(OBJECT_ESCAPES);
    if (!kind || rel === '.' || rel === '') return undefined;
    const parts = rel.split('/');
    for (const p of parts) {
      if (Buffer.byteLength(p) > MAX_NAME_BYTES)
        throw new SnapshotLimitError(`archive entry name has a component of ${Buffer.byteLength(p)} bytes (limit ${MAX_NAME_BYTES})`, 'name');
    }
    if (Buffer.byteLength(this.#tree) + 1 + Buffer.byteLength(rel) > MAX_PATH_BYTES) {
      throw new SnapshotLimitError(`archive entry ${JSON.stringify(rel.slice(0, 64))}... is too long to restore under ${this.#dest.dir}`, 'name');
    }
    // An artifact: any name, below its destination.
    if (this.#opts.artifact) return this.#opts.artifact.under ? `${this.#opts.artifact.under}/${rel}` : rel;
    // The snapshot's own roots only: alloc/data and each task's local/.
    const top = parts[0]!;
    const root = top === 'alloc' ? 'data' : 'local';
    if (top !== 'alloc' && taskNameProblem(top))
      throw this.#streamError(new Error(`archive entry ${JSON.stringify(rel)} is not under alloc/data or a task's local/`));
    if (parts.length === 1) {
      if (kind === 'dir') return undefined; // the alloc or task dir itself: dest has its own
    } else if (parts[1] === root) {
      if (parts.length === 2 && kind !== 'dir') throw this.#streamError(new Error(`archive entry ${JSON.stringify(rel)} must be a directory`));
      return rel;
    }
    throw this.#streamError(new Error(`archive entry ${JSON.stringify(rel)} is not under alloc/data or a task's local/`));
  }

  async #handle(entry: ReadEntry): Promise<void> {
    if (++this.#count > (this.#opts.maxEntries ?? DEFAULT_MAX_ENTRIES)) {
      throw new SnapshotLimitError(`archive has more than ${this.#opts.maxEntries ?? DEFAULT_MAX_ENTRIES} entries`, 'entries');
    }
    const name = entry.path;
    if (!this.#opts.artifact && name === `NOMAD-${this.#opts.prevAllocId}-ERROR.log`) {
      const body = (await readAll(this.#body(entry), 64 * 1024)).toString('utf8');
      throw new SnapshotRemoteError(
        `error streaming previous alloc ${JSON.stringify(this.#opts.prevAllocId)} for new alloc ${JSON.stringify(this.#dest.allocId)}: ${body}`,
        body,
      );
    }
    const type = entry.type;
    const kind: Kind | undefined =
      type === 'Directory' || type === 'GNUDumpDir'
        ? 'dir'
        : type === 'File' || type === 'OldFile' || type === 'ContiguousFile'
          ? 'file'
          : type === 'SymbolicLink'
            ? 'link'
            : undefined;
    const rel = this.#checkName(name, kind);
    if (!rel || !kind) {
      entry.resume(); // hard links, devices, fifos, the roots themselves: ignored
      return;
    }
    this.#parentsOf(rel);
    const rawMode = (entry.mode ?? (kind === 'dir' ? 0o755 : 0o644)) & 0o7777;
    const mode = this.#sanitize(rel, rawMode, kind);
    const existing = this.#kinds.get(rel);
    if (existing === 'dir' && kind !== 'dir') throw this.#streamError(new Error(`${rel}: a directory in the archive is replaced by a ${kind}`));
    if (existing && existing !== 'dir' && kind === 'dir') throw this.#streamError(new Error(`${rel}: a ${existing} in the archive is replaced by a directory`));
    if (existing === 'link') this.#links.delete(rel); // never made: a later entry wins, as in tar

    if (kind === 'dir') {
      entry.resume();
      if (!existing) this.#mkdir(rel);
      this.#dirModes.set(rel, mode);
      return;
    }
    if (kind === 'link') {
      entry.resume();
      const target = entry.linkpath ?? '';
      if (Buffer.byteLength(target) > MAX_PATH_BYTES)
        throw new SnapshotLimitError(`symlink ${rel} has a target of ${Buffer.byteLength(target)} bytes (limit ${MAX_PATH_BYTES})`, 'name');
      // Cheap early refusal by text; the real judgement is made in the finished tree.
      if (target === '' || path.isAbsolute(target) || target.includes('\0') || lexicallyOutside(rel, target)) throw new SnapshotEscapeError(SYMLINK_ESCAPES);
      if (existing === 'file') {
        await this.#writes.get(rel);
        this.#fsStep(() => unlinkSync(path.join(this.#tree, rel)), rel);
      }
      this.#record(rel, 'link');
      this.#links.set(rel, target);
      return;
    }
    await this.#writeFile(rel, entry, mode, existing === 'file');
  }

  /** Who gets `rel` (as root): the task's user under `<task>/`, else the default owner; never uid 0. */
  #ownerFor(rel: string): { uid: number; gid: number } | undefined {
    if (!this.#owner) return undefined;
    const slash = rel.indexOf('/');
    const top = slash === -1 ? rel : rel.slice(0, slash);
    const o = top === 'alloc' ? undefined : this.#opts.taskOwners?.[top];
    return o && o.uid !== 0 && o.gid !== 0 ? o : this.#owner;
  }

  /** Strips setuid/setgid (and a file's sticky bit); notes the path when something was removed. */
  #sanitize(rel: string, mode: number, kind: Kind): number {
    if (kind === 'link') return 0o777;
    if (mode & 0o6000) this.#stripped.push(rel);
    return mode & (kind === 'dir' ? 0o1777 : 0o777);
  }

  /** Makes the missing parents of `rel` in the staging tree; refuses one that is a file or a declared link. */
  #parentsOf(rel: string): void {
    let i = rel.indexOf('/');
    while (i !== -1) {
      const p = rel.slice(0, i);
      const k = this.#kinds.get(p);
      if (k === 'link') throw new SnapshotEscapeError(OBJECT_ESCAPES); // never written through a link
      if (k === 'file') throw this.#streamError(new Error(`${rel}: parent ${p} is a file`));
      if (!k) this.#mkdir(p);
      i = rel.indexOf('/', i + 1);
    }
  }

  #mkdir(rel: string): void {
    this.#fsStep(() => mkdirSync(path.join(this.#tree, rel), { mode: 0o700 }), rel);
    this.#record(rel, 'dir');
  }

  #record(rel: string, kind: Kind): void {
    this.#kinds.set(rel, kind);
    const slash = rel.lastIndexOf('/');
    const parent = slash === -1 ? '' : rel.slice(0, slash);
    let set = this.#children.get(parent);
    if (!set) this.#children.set(parent, (set = new Set()));
    set.add(slash === -1 ? rel : rel.slice(slash + 1));
  }

  #fsStep<T>(fn: () => T, what: string): T {
    try {
      return fn();
    } catch (err) {
      throw this.#fsError(err, what);
    }
  }

  /**
   * Writes a regular file in the staging tree (never through a link: there is none yet). The
   * body is read here, in archive order; the writes run on the thread pool, a bounded number at
   * a time ({@link MAX_WRITES_IN_FLIGHT}), and are all done before any link is made.
   */
  async #writeFile(rel: string, entry: ReadEntry, mode: number, replace: boolean): Promise<void> {
    const size = entry.size ?? 0;
    const max = this.#opts.maxBytes;
    if (max !== undefined && this.#bytes + size > max) {
      throw new SnapshotLimitError(`snapshot exceeds ${max} bytes (the ephemeral disk size) at ${rel}`, 'bytes');
    }
    this.#bytes += size;
    const abs = path.join(this.#tree, rel);
    if (replace) await this.#writes.get(rel); // the earlier entry for this path lands first
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_NOFOLLOW | (replace ? fsc.O_TRUNC : fsc.O_EXCL);
    const owner = this.#ownerFor(rel);
    if (!replace) this.#record(rel, 'file');
    if (size <= SMALL_FILE) {
      const parts: Buffer[] = [];
      for await (const c of this.#body(entry)) parts.push(c);
      await this.#room(size);
      this.#track(rel, size, async () => {
        const fh = await open(abs, flags, 0o600);
        try {
          if (parts.length) await writeAll(fh, parts);
          await this.#finishFile(fh, mode, owner);
        } finally {
          await fh.close();
        }
      });
      return;
    }
    // Large: one handle, batches appended in order; the next batch is read while one is written.
    await this.#room(0);
    let opened: Promise<FileHandle> | undefined = open(abs, flags, 0o600);
    let chain: Promise<unknown> = opened;
    let n = 0;
    let batch: Buffer[] = [];
    const flush = async () => {
      const parts = batch;
      const bytes = n;
      batch = [];
      n = 0;
      // Bounded per file too: at most one batch queued behind the one being written.
      if (this.#bytesInFlight + bytes > MAX_BYTES_IN_FLIGHT) await chain.catch(() => undefined);
      await this.#room(bytes);
      this.#bytesInFlight += bytes;
      const prev = chain;
      chain = prev.then(async () => writeAll(await opened!, parts)).finally(() => (this.#bytesInFlight -= bytes));
      chain.catch(() => undefined); // judged once, below
    };
    try {
      for await (const c of this.#body(entry)) {
        batch.push(c);
        n += c.length;
        if (n >= WRITE_BATCH) await flush();
      }
      if (batch.length) await flush();
    } catch (err) {
      const fh = opened;
      opened = undefined;
      await chain.catch(() => undefined);
      await (await fh.catch(() => undefined))?.close().catch(() => undefined);
      throw err;
    }
    const fhP = opened;
    const done = chain;
    this.#track(rel, 0, async () => {
      const fh = await fhP;
      try {
        await done;
        await this.#finishFile(fh, mode, owner);
      } finally {
        await fh.close();
      }
    });
  }

  /** Mode (explicit: the umask must not apply) and owner of a file just written. */
  async #finishFile(fh: FileHandle, mode: number, owner: { uid: number; gid: number } | undefined): Promise<void> {
    if (mode !== 0o600) await fh.chmod(mode);
    if (owner) await fh.chown(owner.uid, owner.gid);
  }

  /** Waits until a write of `bytes` more fits in flight; throws the first write failure. */
  async #room(bytes: number): Promise<void> {
    while (this.#writes.size >= MAX_WRITES_IN_FLIGHT || (this.#writes.size > 0 && this.#bytesInFlight + bytes > MAX_BYTES_IN_FLIGHT)) {
      if (this.#writeFailure) break;
      await Promise.race(this.#writes.values());
    }
    if (this.#writeFailure) throw this.#writeFailure.err;
    if (this.#failure) throw this.#failure.err;
  }

  /** Runs one file's writes in the background, holding `bytes` of the in-flight budget. */
  #track(rel: string, bytes: number, job: () => Promise<void>): void {
    this.#bytesInFlight += bytes;
    const p: Promise<void> = job()
      .catch((err) => {
        this.#writeFailure ??= { err: this.#fsError(err, rel) };
      })
      .finally(() => {
        this.#bytesInFlight -= bytes;
        if (this.#writes.get(rel) === p) this.#writes.delete(rel);
      });
    this.#writes.set(rel, p);
  }

  /** Every write done; throws the first that failed. */
  async #allWritten(): Promise<void> {
    await this.#settleWrites();
    if (this.#writeFailure) throw this.#writeFailure.err;
  }

  /** Waits for every write in flight, whatever its outcome. */
  async #settleWrites(): Promise<void> {
    while (this.#writes.size) await Promise.allSettled([...this.#writes.values()]);
  }

  /** Creates the declared symlinks, now that every file and dir has been written. */
  #makeLinks(): void {
    for (const [rel, target] of this.#links) {
      this.#fsStep(() => symlinkSync(target, path.join(this.#tree, rel)), rel);
      const owner = this.#ownerFor(rel);
      if (owner) this.#fsStep(() => lchownSync(path.join(this.#tree, rel), owner.uid, owner.gid), rel);
    }
  }

  /** Moves the staging tree into dest: existing dirs are merged into, anything else replaced (kept aside until commit). */
  async #merge(): Promise<void> {
    for (const top of this.#children.get('') ?? []) {
      // An artifact's file at the top (mode "file" into the dir itself) is placed like any file.
      if (this.#opts.artifact && this.#kinds.get(top) !== 'dir') {
        await this.#mergeEntry('', top);
        continue;
      }
      const d = path.join(this.#base, top);
      const st = this.#fsStep(() => lstatOrUndefined(d), top);
      if (st?.isSymbolicLink()) throw new SnapshotEscapeError(OBJECT_ESCAPES);
      if (st && !st.isDirectory()) throw this.#streamError(new Error(`${top} exists in ${this.#dest.dir} and is not a directory`));
      if (!st) {
        this.#mayWrite('', undefined);
        // A task dir the dest has not built yet: made as the alloc dir makes its own (0777, the
        // owner's); an artifact's new top-level dir in a task dir: 0755.
        this.#fsStep(() => mkdirSync(d, { mode: 0o700 }), top);
        this.#journal.push({ op: 'mkdir', dest: d });
        this.#fsStep(() => setDirAttrs(d, this.#opts.artifact ? (this.#dirModes.get(top) ?? 0o755) : 0o777, this.#ownerFor(top)), top);
      }
      this.#merged.add(top);
      await this.#mergeDir(top);
    }
  }

  async #mergeDir(rel: string): Promise<void> {
    for (const name of this.#children.get(rel) ?? []) await this.#mergeEntry(rel, name);
  }

  /** Merges entry `name` of the staging tree's dir `rel` into dest: a dir into an existing dir, anything else in place. */
  async #mergeEntry(rel: string, name: string): Promise<void> {
    const r = rel ? `${rel}/${name}` : name;
    const d = path.join(this.#base, r);
    const st = this.#fsStep(() => lstatOrUndefined(d), r);
    if (st?.isDirectory() && this.#kinds.get(r) === 'dir') {
      this.#merged.add(r);
      await this.#mergeDir(r);
      return;
    }
    this.#mayWrite(rel, st);
    if (st) {
      // Replacing a link in dest is fine (it is not followed) unless it points outside: then
      // the archive is trying to write where the link leads.
      if (st.isSymbolicLink() && (await resolveInTree(this.#base, r)) !== 'inside') throw new SnapshotEscapeError(OBJECT_ESCAPES);
      const kept = path.join(this.#staging, KEPT, String(this.#kept++));
      this.#fsStep(() => renameSync(d, kept), r);
      this.#journal.push({ op: 'aside', dest: d, kept });
    }
    this.#fsStep(() => renameSync(path.join(this.#tree, r), d), r);
    this.#journal.push({ op: 'in', dest: d });
  }

  /** Refuses to create or replace (`existing`) an entry in dest's dir `rel` that the artifact's user could not. */
  #mayWrite(rel: string, existing: Stats | undefined): void {
    const who = this.#opts.artifact?.writableBy;
    if (!who) return;
    const dir = lstatSync(path.join(this.#base, rel));
    const bits = dir.uid === who.uid ? dir.mode >> 6 : dir.gid === who.gid ? dir.mode >> 3 : dir.mode;
    const sticky = (dir.mode & 0o1000) !== 0 && existing !== undefined && existing.uid !== who.uid && dir.uid !== who.uid;
    if ((bits & 0o3) !== 0o3 || sticky) {
      throw this.#streamError(new Error(`permission denied: uid ${who.uid} may not write in ${rel || 'the task dir'}`));
    }
  }

  /**
   * Links already in the dest dirs the archive writes into, with where they lead now: a new
   * link can change where an old one leads, so those that are inside now are judged again after
   * the merge. (Ones already outside are the dest's own business, not this archive's.)
   */
  async #linksBefore(): Promise<string[]> {
    const found: string[] = [];
    const walk = (rel: string) => {
      let list;
      try {
        list = readdirSync(path.join(this.#base, rel), { withFileTypes: true });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      for (const d of list) {
        const r = `${rel}/${d.name}`;
        if (d.isSymbolicLink()) found.push(r);
        else if (d.isDirectory()) walk(r);
      }
    };
    for (const top of this.#children.get('') ?? []) {
      for (const name of this.#children.get(top) ?? []) this.#fsStep(() => walk(`${top}/${name}`), `${top}/${name}`);
    }
    const inside: string[] = [];
    for (const rel of found) if ((await resolveInTree(this.#base, rel)) === 'inside') inside.push(rel);
    return inside;
  }

  /** Judges every symlink by how the kernel resolves it in the finished tree. */
  async #sweep(before: string[]): Promise<void> {
    for (const rel of new Set([...this.#links.keys(), ...before])) {
      const where = await resolveInTree(this.#base, rel).catch((err) => {
        throw this.#fsError(err, rel);
      });
      if (where === 'outside') throw new SnapshotEscapeError(SYMLINK_ESCAPES);
      if (where === 'loop') throw this.#streamError(new Error(`symlink ${rel}: too many levels of symbolic links`));
    }
  }

  /**
   * Directory modes (and, as root, owners), deepest first, under `root` (the staging tree or
   * dest) for the dirs `which` selects, with the bits of `keep` added (a non-root berth keeps
   * rwx on its own dirs, or it could not remove them with the alloc). Never through a link:
   * each dir is opened with O_NOFOLLOW and changed through its descriptor.
   */
  #finalModes(root: string, which: (rel: string) => boolean, keep = 0): void {
    const dirs = [...this.#kinds].filter(([rel, k]) => k === 'dir' && rel.includes('/') && which(rel)).map(([rel]) => rel);
    dirs.sort((a, b) => b.split('/').length - a.split('/').length);
    for (const rel of dirs) {
      this.#fsStep(() => setDirAttrs(path.join(root, rel), (this.#dirModes.get(rel) ?? 0o755) | keep, this.#ownerFor(rel)), rel);
    }
  }

  /** Puts dest back as it was (journal in reverse) and removes the staging dir. */
  #undo(): void {
    for (const step of this.#journal.reverse()) {
      try {
        if (step.op === 'in') removeOurs(step.dest);
        else if (step.op === 'aside') renameSync(step.kept, step.dest);
        else rmdirSync(step.dest);
      } catch {
        /* keep going: every other step still gets its chance */
      }
    }
    this.#journal.length = 0;
    if (this.#staging) {
      try {
        removeOurs(this.#staging);
      } catch {
        /* nothing more to do; destroy removes it with the alloc dir */
      }
    }
  }
}

/** Mode and owner of the directory at `abs`, through a descriptor opened without following a link. */
function setDirAttrs(abs: string, mode: number, owner: { uid: number; gid: number } | undefined): void {
  const fd = openSync(abs, fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW);
  try {
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/** True when `target`, read as text from the link at `rel`, climbs out of the alloc dir. */
function lexicallyOutside(rel: string, target: string): boolean {
  let depth = rel.split('/').length - 1;
  for (const c of target.split('/')) {
    if (c === '..') {
      if (--depth < 0) return true;
    } else if (c !== '' && c !== '.') depth++;
  }
  return false;
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** rm -r of a tree this restore made; as non-root first makes its dirs writable again. */
function removeOurs(p: string): void {
  try {
    rmSync(p, { recursive: true, force: true });
  } catch {
    const open = (q: string) => {
      const st = lstatSync(q);
      if (!st.isDirectory()) return;
      chmodSync(q, 0o700);
      for (const n of readdirSync(q)) open(path.join(q, n));
    };
    open(p);
    rmSync(p, { recursive: true, force: true });
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
