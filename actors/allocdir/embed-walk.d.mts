import type * as FS from 'node:fs';
import type * as PATH from 'node:path';
import type { ChrootRecord, ChrootStats } from './chroot.ts';

/** The input of {@link embedSync}: plain data, so it can cross to a worker. */
export interface EmbedJob {
  taskDir: string;
  map: Array<[string, string]>;
  skip: string[];
  euid: number;
  egid: number;
  umask: number;
  prev?: ChrootRecord;
  /** Post progress messages from the worker (see `EmbedOptions.onProgress`). */
  progress?: boolean;
}

/** What one walk did, and the record the next build of the same map starts from. */
export interface EmbedResult {
  stats: ChrootStats;
  record: ChrootRecord;
}

/**
 * Embeds `job.map` into `job.taskDir` (see embed-walk.mjs). Throws plain Errors. `progress`, when
 * given, is called about every 200 ms with what the walk did so far.
 */
export declare function embedSync(fs: typeof FS, path: typeof PATH, job: EmbedJob, progress?: (stats: ChrootStats) => void): EmbedResult;
