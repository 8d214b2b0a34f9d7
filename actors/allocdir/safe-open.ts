/**
 * Opening a path a task controls without letting the task block the host. An `open(O_RDONLY)` of
 * a FIFO waits until a writer appears, inside a libuv thread-pool thread: four such opens take the
 * whole pool and every other file call of the process waits with them. So the type is looked at
 * first (`stat`, which never blocks), the open is non-blocking, and the fd's own `fstat` must show
 * a regular file (a FIFO swapped in between is caught there, opened without blocking).
 * @module
 */
import fs, { type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { BerthError } from '../../model/errors.ts';

/** A path that is not a regular file (or directory) where berth reads one: `kind` says what it is. */
export class UnsupportedFileTypeError extends BerthError {
  constructor(
    readonly path: string,
    readonly kind: FileKind,
  ) {
    super(`${path} is a ${kind}, not a regular file: berth reads only regular files and directories there`);
  }
}

/** What a stat says a path is. */
export type FileKind =
  'regular file' | 'directory' | 'symbolic link' | 'FIFO (named pipe)' | 'unix socket' | 'character device' | 'block device' | 'unknown file type';

/** The kind of file `st` describes. */
export function fileKind(st: Stats): FileKind {
  if (st.isFile()) return 'regular file';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symbolic link';
  if (st.isFIFO()) return 'FIFO (named pipe)';
  if (st.isSocket()) return 'unix socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  return 'unknown file type';
}

/** Options of {@link openRegularFile}. */
export interface OpenRegularOptions {
  /** Refuse a symlink as the last component (`O_NOFOLLOW`, and `lstat` for the first look). */
  noFollow?: boolean;
  /** The name errors carry (default `p`): the path as the caller was given it. */
  shownAs?: string;
}

/**
 * Opens `p` read-only when it is a regular file; anything else (FIFO, socket, device, directory)
 * is refused with {@link UnsupportedFileTypeError} before any open that could block. Errors of
 * the stat or open themselves (ENOENT, ELOOP, EACCES) are thrown as they are.
 */
export async function openRegularFile(p: string, opts: OpenRegularOptions = {}): Promise<{ fh: FileHandle; st: Stats }> {
  const shown = opts.shownAs ?? p;
  const first = opts.noFollow ? await fs.promises.lstat(p) : await fs.promises.stat(p);
  if (!first.isFile()) throw new UnsupportedFileTypeError(shown, fileKind(first));
  const fh = await fs.promises.open(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (opts.noFollow ? fs.constants.O_NOFOLLOW : 0));
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new UnsupportedFileTypeError(shown, fileKind(st));
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}
