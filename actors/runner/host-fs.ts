/**
 * The real {@link HostFs}: the runtime's filesystem steps outside alloc dirs.
 * @module
 */
import { mkdir, rm, rmdir } from 'node:fs/promises';
import type { HostFs } from './runtime.ts';

/** `node:fs` behind the {@link HostFs} seam. */
export const realHostFs: HostFs = {
  mkdirp: async (path) => {
    await mkdir(path, { recursive: true });
  },
  rmrf: (path) => rm(path, { recursive: true, force: true }),
  rmdir: (path) => rmdir(path),
};
