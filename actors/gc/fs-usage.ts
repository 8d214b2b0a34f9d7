/**
 * How full the filesystem holding the client's alloc dir is, read with statfs(2). The garbage
 * collector takes a {@link FsUsageReader} so hosts and tests can supply their own.
 * @module
 */
import { statfs } from 'node:fs/promises';
import type { FsUsage } from '../../machines/policy/gc.ts';

/** Reads the usage of the filesystem that holds `path`. */
export type FsUsageReader = (path: string) => Promise<FsUsage>;

/**
 * Usage as `df` (and Nomad's host stats) count it: used blocks over the blocks a non-root user
 * could have (used + available), so the root-reserved blocks count as neither; inodes as used
 * over total. A filesystem without inode accounting reads 0 % inodes.
 * @example
 * const { diskUsedPercent } = await statfsUsage('/var/lib/berth/alloc');
 */
export const statfsUsage: FsUsageReader = async (path) => {
  const s = await statfs(path);
  const used = s.blocks - s.bfree;
  const usable = used + s.bavail;
  return {
    diskUsedPercent: usable > 0 ? (used / usable) * 100 : 0,
    inodesUsedPercent: s.files > 0 ? ((s.files - s.ffree) / s.files) * 100 : 0,
  };
};
