/**
 * A chroot build's progress as the CLI shows it, for `berth run` (from the bus) and `job run`
 * (from the agent's event stream): what was embedded so far, and the share of the whole once the
 * count of the tree's files is known.
 * @module
 */

/** The counts a `chroot.progress` message carries. */
export interface ChrootProgressCounts {
  files: number;
  dirs: number;
  bytes: number;
  ms: number;
  done: number;
  total?: number;
}

/** "12,345 files, 678 dirs, 1.2 s" (with the MB copied when some files could not be hard-linked). */
export function chrootCounts(m: ChrootProgressCounts): string {
  // Files are hard-linked where they can be: bytes are only those copied (another filesystem).
  const copied = m.bytes ? `, ${(m.bytes / 1048576).toFixed(1)} MB copied` : '';
  return `${m.files.toLocaleString('en-US')} files, ${m.dirs.toLocaleString('en-US')} dirs${copied}, ${(m.ms / 1000).toFixed(1)} s`;
}

/** The share done (0..1), once the total is known. */
export function chrootFraction(m: ChrootProgressCounts): number | undefined {
  return m.total ? Math.min(1, m.done / m.total) : undefined;
}

/** "building chroot: <counts> (42 %)", one line. */
export function chrootProgressLine(m: ChrootProgressCounts): string {
  const frac = chrootFraction(m);
  return `building chroot: ${chrootCounts(m)}${frac === undefined ? '' : ` (${Math.floor(frac * 100)} %)`}`;
}

/** How often a non-terminal output prints a task's progress. */
export const CHROOT_PROGRESS_EVERY_MS = 2000;
