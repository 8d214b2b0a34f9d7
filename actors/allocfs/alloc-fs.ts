/**
 * The alloc filesystem API: what `nomad alloc fs` reads (Nomad's `AllocDirFS`), over one alloc
 * dir. Paths are relative to the alloc dir; a leading `/` is the alloc dir itself.
 *
 * ```
 *  path ─► lexical check (..) ─► realpath inside the alloc dir? ─► secrets/private? (reads only)
 *       ─► open ─► the open fd's real path checked again (a symlink swapped meanwhile)
 * ```
 * `list` and `stat` go through the fd of the dir they look in (opened without following a link,
 * its real path checked), so a dir swapped for a link out after the lookup is refused, and one
 * swapped after the open is still the one read: never a name or size from outside.
 * Where berth is stricter than Nomad, on purpose: containment compares whole path components
 * (Nomad's prefix check lets `/a/b10` pass as inside `/a/b1`), and the secrets/private refusal
 * looks at the resolved path too, so a symlink in `local/` pointing at `../secrets/token` is
 * refused as well. As in Nomad, `list` and `stat` of `secrets/` are allowed; reading is not.
 * @module
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
/** What the alloc fs reads: the alloc dir and its task dirs (an `AllocDir` is one). */
export interface AllocFSSource {
  readonly dir: string;
  /** The task dirs whose `secrets/` and `private/` are never read. */
  tasks(): ReadonlyArray<{ readonly dir: string }>;
}
import { isNotFound, isWithin, pathEscapesAllocViaRelative } from '../allocdir/escape.ts';
import { openRegularFile, UnsupportedFileTypeError } from '../allocdir/safe-open.ts';
import {
  AllocFileNotFoundError,
  AllocFileTypeError,
  AllocFileUnreadableError,
  AllocFSArgumentError,
  AllocFSError,
  AllocPathEscapeError,
  AllocSymlinkLoopError,
  PrivateFileReadError,
  SecretFileReadError,
} from './errors.ts';
import { goFileMode } from './file-mode.ts';
import { errorTextWithoutPath } from '../../model/error-text.ts';

/** One entry, as Nomad's `AllocFileInfo` (`modTime` in ms since the epoch). */
export interface AllocFileInfo {
  name: string;
  isDir: boolean;
  size: number;
  /** Go's `FileMode.String()`, e.g. `-rw-r--r--`, `drwxrwxrwx`. */
  fileMode: string;
  modTime: number;
}

/** Options of {@link AllocFS.stream}. */
export interface AllocFSStreamOptions {
  /** Keep reading as the file grows (waits for it to appear first), until `signal` aborts. */
  follow?: boolean;
  /** Byte offset to start at. Default 0. */
  offset?: number;
  /** Ends the iteration quietly and releases the fd and watcher. */
  signal?: AbortSignal;
}

/** Read access to one alloc dir (`AllocRunner.fs`). */
export interface AllocFS {
  /**
   * The entries of a directory, sorted by name in byte (UTF-8) order, as Nomad sorts them;
   * symlinks are reported as such (`L...`).
   */
  list(path: string): Promise<AllocFileInfo[]>;
  /** One entry, following symlinks (inside the alloc dir only). */
  stat(path: string): Promise<AllocFileInfo>;
  /** Up to `limit` bytes from `offset` (fewer at the end of the file). */
  readAt(path: string, offset: number, limit: number): Promise<Buffer>;
  /** The file from `offset`; with `follow`, what is appended after, until `signal` aborts. */
  stream(path: string, opts?: AllocFSStreamOptions): AsyncIterable<Buffer>;
}

/** Largest chunk {@link AllocFS.stream} yields. */
const CHUNK = 64 * 1024;

/**
 * Largest answer of one {@link AllocFS.readAt}: a limit past the end of the file is cut to the
 * file, and what is left must fit one buffer (use `stream` for more).
 */
export const MAX_READ_AT_BYTES = 256 * 1024 * 1024;

/**
 * Creates the alloc fs of `allocDir`. Nothing is opened until a call; every call resolves the
 * alloc dir's real path afresh (it may be moved or rebuilt).
 * @example
 * const fs = createAllocFS(runner.allocDir);
 * await fs.list('alloc/logs');
 * for await (const chunk of fs.stream('alloc/logs/web.stdout.0', { follow: true, signal })) ...
 */
export function createAllocFS(allocDir: AllocFSSource): AllocFS {
  /** Resolves `p` inside the alloc dir: `real` is undefined when nothing is there yet. */
  const resolve = async (p: string) => {
    if (typeof p !== 'string') throw new AllocFSArgumentError('path must be a string');
    if (p.includes('\0')) throw new AllocFSArgumentError(`path must not contain a NUL byte: ${JSON.stringify(p)}`);
    if (pathEscapesAllocViaRelative('', p)) throw new AllocPathEscapeError();
    const base = await realpathOr(allocDir.dir).catch((err) => Promise.reject(wrap(err, p)));
    if (base === undefined) throw new AllocFileNotFoundError(p);
    const full = path.join(base, path.posix.normalize('/' + p));
    const real = await realpathOr(full).catch((err) => Promise.reject(wrap(err, p)));
    if (real !== undefined && !isWithin(base, real)) throw new AllocPathEscapeError();
    return { base, full, real };
  };

  /** Refuses a task's secrets/ or private/, by the path as written and as resolved. */
  const refuseSecrets = (given: string, base: string, ...candidates: Array<string | undefined>) => {
    for (const td of allocDir.tasks()) {
      const rel = path.relative(allocDir.dir, td.dir);
      const secrets = path.join(base, rel, 'secrets').toLowerCase();
      const priv = path.join(base, rel, 'private').toLowerCase();
      for (const c of candidates) {
        if (c === undefined) continue;
        if (isWithin(secrets, c.toLowerCase())) throw new SecretFileReadError(given);
        if (isWithin(priv, c.toLowerCase())) throw new PrivateFileReadError(given);
      }
    }
  };

  /**
   * Opens a regular file for reading (never blocking: a FIFO, socket or device is refused before
   * any open), checked again through the fd's own path.
   */
  const openChecked = async (given: string): Promise<{ fh: FileHandle; size: number }> => {
    const { base, full, real } = await resolve(given);
    refuseSecrets(given, base, full, real);
    if (real === undefined) throw new AllocFileNotFoundError(given);
    let opened: Awaited<ReturnType<typeof openRegularFile>>;
    try {
      opened = await openRegularFile(real, { noFollow: true, shownAs: given });
    } catch (err) {
      throw wrap(err, given);
    }
    const { fh, st } = opened;
    try {
      if (hostOnlyFile(st)) throw new AllocFileUnreadableError(given);
      refuseSecrets(given, base, await fdPathInside(fh, base)); // an unknown path (no /proc) is skipped
      return { fh, size: st.size };
    } catch (err) {
      await fh.close();
      throw err;
    }
  };

  /**
   * Opens a dir of the alloc dir (never through a link swapped in at it) and checks where its fd
   * really is; `via` (`/proc/self/fd/N`) reaches the opened dir whatever is renamed meanwhile, so
   * a listing or stat through it never wanders out. Without /proc, `via` is the path as checked.
   */
  const openDir = async (given: string, base: string, dir: string): Promise<{ fh: FileHandle; via: string }> => {
    let fh: FileHandle;
    try {
      fh = await fs.promises.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
    } catch (err) {
      // A link swapped in for the resolved dir fails as ENOTDIR (O_DIRECTORY) or ELOOP: an escape.
      const swapped = await fs.promises.lstat(dir).then(
        (st) => st.isSymbolicLink(),
        () => false,
      );
      throw swapped ? new AllocPathEscapeError() : wrap(err, given);
    }
    try {
      const at = await fdPathInside(fh, base);
      return { fh, via: at === undefined ? dir : `/proc/self/fd/${fh.fd}` };
    } catch (err) {
      await fh.close();
      throw err;
    }
  };

  return {
    async list(p) {
      const { base, real } = await resolve(p);
      if (real === undefined) throw new AllocFileNotFoundError(p);
      const { fh, via } = await openDir(p, base, real);
      try {
        let names: string[];
        try {
          names = (await fs.promises.readdir(via)).sort(byteOrder);
        } catch (err) {
          throw wrap(err, p);
        }
        const out: AllocFileInfo[] = [];
        for (const name of names) {
          const st = await fs.promises.lstat(path.join(via, name)).catch((err) => {
            if (isNotFound(err)) return undefined; // removed while listing
            throw wrap(err, p);
          });
          if (st) out.push(info(name, st));
        }
        return out;
      } finally {
        await fh.close();
      }
    },

    async stat(p) {
      const { base, real, full } = await resolve(p);
      if (real === undefined) throw new AllocFileNotFoundError(p);
      // Through its dir's fd: a parent swapped for a link out after the lookup is never followed.
      const top = real === base;
      const { fh, via } = await openDir(p, base, top ? real : path.dirname(real));
      try {
        const st = top ? await fh.stat() : await fs.promises.lstat(path.join(via, path.basename(real)));
        if (st.isSymbolicLink()) throw new AllocPathEscapeError(); // resolved, so a link swapped in since
        return info(path.basename(full), st);
      } catch (err) {
        throw wrap(err, p);
      } finally {
        await fh.close();
      }
    },

    async readAt(p, offset, limit) {
      checkCount('offset', offset);
      checkCount('limit', limit);
      const { fh, size } = await openChecked(p);
      try {
        // Never a buffer larger than what is there to read.
        limit = Math.min(limit, Math.max(0, size - offset));
        if (limit > MAX_READ_AT_BYTES) {
          throw new AllocFSArgumentError(`limit: ${limit} bytes from ${p} is more than one read returns (${MAX_READ_AT_BYTES}); stream the file instead`);
        }
        const buf = Buffer.alloc(limit);
        let got = 0;
        while (got < limit) {
          const { bytesRead } = await fh.read(buf, got, limit - got, offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return got === limit ? buf : buf.subarray(0, got);
      } finally {
        await fh.close();
      }
    },

    stream(p, opts = {}) {
      return streamFile(p, opts);
    },
  };

  async function* streamFile(p: string, opts: AllocFSStreamOptions): AsyncGenerator<Buffer, void, undefined> {
    const { follow = false, signal } = opts;
    let pos = opts.offset ?? 0;
    checkCount('offset', pos);
    if (signal?.aborted) return;
    let wake: (() => void) | undefined;
    let dirty = false;
    const poke = () => {
      dirty = true;
      const w = wake;
      wake = undefined;
      w?.();
    };
    const sleep = () => (dirty || signal?.aborted ? Promise.resolve() : new Promise<void>((r) => (wake = r)));
    signal?.addEventListener('abort', poke);
    let watcher: fs.FSWatcher | undefined;
    let fh: FileHandle | undefined;
    try {
      // With follow, a missing file is waited for (Nomad blocks until it exists), by watching
      // its directory; without follow it is an error.
      for (;;) {
        const { real, full } = await resolve(p);
        if (real !== undefined || !follow) break;
        if (!watcher) {
          const dir = await realpathOr(path.dirname(full)).catch((err) => Promise.reject(wrap(err, p)));
          if (dir === undefined) throw new AllocFileNotFoundError(p);
          watcher = fs.watch(dir, { persistent: false }, poke);
          watcher.on('error', poke);
          continue; // look again: it may have appeared before the watch began
        }
        dirty = false;
        await sleep();
        if (signal?.aborted) return;
      }
      watcher?.close();
      watcher = undefined;
      fh = (await openChecked(p)).fh;
      if (follow) {
        watcher = fs.watch((await fdPath(fh.fd)) ?? (await resolve(p)).real!, { persistent: false }, poke);
        watcher.on('error', poke);
      }
      const buf = Buffer.allocUnsafe(CHUNK);
      while (!signal?.aborted) {
        dirty = false;
        const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
        if (bytesRead > 0) {
          pos += bytesRead;
          yield Buffer.from(buf.subarray(0, bytesRead));
          continue;
        }
        if (!follow) return;
        const st = await fh.stat();
        if (st.nlink === 0) return; // deleted: nothing more will come (Nomad: "file deleted")
        if (st.size < pos) {
          pos = 0; // truncated: start over from the new beginning (Nomad: "file truncated")
          continue;
        }
        await sleep();
      }
    } finally {
      signal?.removeEventListener('abort', poke);
      watcher?.close();
      await fh?.close();
    }
  }
}

/**
 * A host file hard-linked in (a chroot's `/etc/shadow`, `/etc/gshadow`, `/etc/sudoers`, an ssh host
 * key) that the task's user cannot read: root's, more than one link, no read bit for others.
 * Served, it would hand the host's secrets to anyone with alloc-fs access.
 */
function hostOnlyFile(st: fs.Stats): boolean {
  return st.uid === 0 && st.nlink > 1 && (st.mode & 0o004) === 0;
}

function info(name: string, st: fs.Stats): AllocFileInfo {
  return { name, isDir: st.isDirectory(), size: st.size, fileMode: goFileMode(st), modTime: st.mtimeMs };
}

function checkCount(what: string, n: number) {
  if (!Number.isSafeInteger(n) || n < 0) throw new AllocFSArgumentError(`${what} must be a non-negative integer, got ${String(n)}`);
}

async function realpathOr(p: string): Promise<string | undefined> {
  try {
    return await fs.promises.realpath(p);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Byte order of the names' UTF-8, as Go compares strings (Nomad's listing): JavaScript's default
 * sort compares UTF-16 units, which puts a name above U+FFFF before one in U+E000–U+FFFF.
 */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Where an open fd really is, refused as an escape when outside `base` (a link swapped in between
 * the check and the open); undefined where that cannot be read (no /proc).
 */
async function fdPathInside(fh: FileHandle, base: string): Promise<string | undefined> {
  const at = await fdPath(fh.fd);
  if (at !== undefined && !isWithin(base, at)) throw new AllocPathEscapeError();
  return at;
}

/** The path an open fd refers to (Linux `/proc/self/fd`); undefined where that is not available. */
async function fdPath(fd: number): Promise<string | undefined> {
  try {
    return await fs.promises.readlink(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

function wrap(err: unknown, given: string): Error {
  if (err instanceof AllocFSError) return err;
  if (err instanceof UnsupportedFileTypeError) {
    if (err.kind === 'directory') return new AllocFSError(`${given} is a directory`, 'EISDIR');
    if (err.kind === 'symbolic link') return new AllocPathEscapeError(); // a symlink swapped in after realpath
    return new AllocFileTypeError(given, err.kind);
  }
  if (isNotFound(err)) return new AllocFileNotFoundError(given, (err as NodeJS.ErrnoException).code);
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ELOOP' && e.syscall === 'realpath') return new AllocSymlinkLoopError(given);
  if (e?.code === 'ELOOP') return new AllocPathEscapeError(); // O_NOFOLLOW met a symlink swapped in
  return new AllocFSError(`${given}: ${errorTextWithoutPath(err)}`, e?.code, { cause: err });
}
