/**
 * The restore's one write loop: `writev` until every byte is written (a short write is not an
 * error, so its rest is written again).
 * @module
 */
import { SnapshotStreamError } from './errors.ts';

/** What {@link writeAll} writes to: a `FileHandle` (only its `writev` is used). */
export interface VectorWriter {
  writev(buffers: readonly Buffer[]): Promise<{ bytesWritten: number }>;
}

/**
 * Writes every byte of `parts`: `writev` may write less than asked and still succeed (a short
 * write, as when the disk fills), so the rest is written again until done; the call after a
 * short write on a full disk fails with ENOSPC, which fails the restore (a write of nothing
 * fails it too, rather than loop).
 */
export async function writeAll(fh: VectorWriter, parts: readonly Buffer[]): Promise<void> {
  let left: readonly Buffer[] = parts;
  let total = left.reduce((n, b) => n + b.length, 0);
  while (total > 0) {
    const { bytesWritten } = await fh.writev(left);
    if (bytesWritten === 0) throw new SnapshotStreamError('a write wrote nothing (no space left on device?)');
    total -= bytesWritten;
    let skip = bytesWritten;
    while (skip > 0 && left.length) {
      if (left[0]!.length <= skip) {
        skip -= left[0]!.length;
        left = left.slice(1);
      } else {
        left = [left[0]!.subarray(skip), ...left.slice(1)];
        skip = 0;
      }
    }
  }
}
