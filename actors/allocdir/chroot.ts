/**
 * Chroot building: embeds host paths into a task dir, after Nomad's `embedDirs`.
 *
 * For each `source → destination` of the chroot map, the source tree is walked breadth-first and
 * recreated under the task dir: regular files are hard-linked (copied when linking fails, e.g.
 * across filesystems or under `protected_hardlinks`), symlinks are recreated with their target
 * text, devices, sockets and fifos are skipped, root's files others may not read (`/etc/shadow`,
 * `/etc/gshadow`, `/etc/sudoers`, ssh host keys: owner 0, no `o+r`) are skipped, and directories are created with the owner and
 * mode of their source directory (0755 for a parent the mapping implies). Entries that already
 * exist are kept, so rebuilding after a restart is cheap: an existing directory is listed once
 * and its present children are skipped without a syscall each.
 *
 * The client's alloc dir (and the task dir itself) is never embedded, at any depth, whatever the
 * mapping (Nomad #2522). Unlike Nomad's exact string match, sources are compared by real path
 * (the walk never follows a link, so every walked path is real) and by device+inode, so mapping
 * `/`, the client data dir, or a symlink to either still terminates.
 *
 * Why a worker thread with synchronous calls: measured on the target machine, issuing the ~140k
 * link/mkdir calls of the default chroot_env through libuv's thread pool (64 in flight) took 3-4x
 * the time of `cp -al`, nearly all of it kernel time (4 threads contending on the same directory
 * locks, plus a futex/eventfd round trip per call). The same calls issued in sequence from one
 * thread match `cp -al`. A worker keeps them off the event loop, and can be cancelled.
 * @module
 */
import { Worker } from 'node:worker_threads';
import { ChrootError } from './errors.ts';
import { embedSync, type EmbedJob, type EmbedResult } from './embed-walk.mjs';
import { errorText } from '../../model/error-text.ts';

/** What a chroot build did; published as a "Task Setup" event by the runtime. */
export interface ChrootStats {
  /** Regular files embedded by this build (`links + copies`). */
  files: number;
  /** Directories created. */
  dirs: number;
  /** Symlinks created. */
  symlinks: number;
  /** Files embedded as hard links. */
  links: number;
  /** Files embedded by copying (linking failed: another filesystem, EPERM, ...). */
  copies: number;
  /** Bytes copied. */
  bytes: number;
  /** Entries left alone: already present, not embeddable (devices, fifos...) or excluded. */
  skipped: number;
  /** Wall time of the build in milliseconds (worker start included). */
  ms: number;
}

/** Options of {@link embed}. */
export interface EmbedOptions {
  /** Host paths never embedded, at any depth (the client alloc dir, the mounts dir). */
  skip: string[];
  /** Stops the build (the worker is terminated); `embed` rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Where to keep what this build saw, so the next build with the same map and task dir only
   * lists directories that changed. Pass the same object to every build of one task dir;
   * it stays in memory (about 1 MB for the default chroot_env).
   */
  cache?: ChrootCache;
  /**
   * Called about every 200 ms while the build runs, with what it did so far and, when known,
   * `total`: the entries (files and links) it will look at, counted by a second worker on a
   * first build, or taken from the last build on a rebuild.
   */
  onProgress?: (progress: ChrootProgress) => void;
}

/** What a build did so far (see {@link EmbedOptions.onProgress}). */
export type ChrootProgress = ChrootStats & { total?: number };

/** Holder for the {@link ChrootRecord} of the last successful build of one task dir. */
export interface ChrootCache {
  record?: ChrootRecord;
}

/**
 * What a build saw, kept in memory (by the {@link TaskDir}) so the next build of the same map can
 * skip listing directories that did not change: for each walked directory, in breadth-first
 * order, its source, destination, where its subdirectories sit in the arrays, and how many
 * other entries it held. Opaque to callers; plain data so it crosses to the worker.
 *
 * A directory is "unchanged" when its source's mtime is older than the previous build's start
 * and its destination's mtime older than that build's end (both with margins for coarse
 * timestamps): then its entries are exactly those embedded last time. Anything else (new or
 * changed host directories, entries the task removed) gets a full listing, as on a fresh walk.
 * It is never stored in the task dir, where a task could forge it.
 */
export interface ChrootRecord {
  key: string;
  t0: number;
  t1: number;
  srcs: string[];
  rels: string[];
  first: number[];
  count: number[];
  others: number[];
}

/** The process umask, read once (reading it means setting it twice, so do it rarely). */
let cachedUmask: number | undefined;
function currentUmask(): number {
  if (cachedUmask === undefined) {
    try {
      const old = process.umask(0o022);
      process.umask(old);
      cachedUmask = old;
    } catch {
      cachedUmask = 0o022; // not readable this way in a worker thread
    }
  }
  return cachedUmask;
}

/** The worker that runs the walk off the event loop (a plain module: see embed-walk.mjs). */
const WORKER_URL = new URL('./embed-worker.mjs', import.meta.url);

// A second worker, run beside a first build that reports progress: how many non-directory
// entries the sources hold (readdir only, no stat: about a tenth of the build's work), so the
// progress has a total to measure against.
const COUNT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
let n = 0;
const walk = (d) => {
  let es;
  try { es = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
  for (const e of es) {
    if (e.isDirectory()) walk(path.join(d, e.name));
    else n++;
  }
};
for (const src of workerData) {
  let st;
  try { st = fs.lstatSync(src); } catch { continue; }
  if (st.isDirectory()) walk(src);
  else n++;
}
parentPort.postMessage(n);
`;

/** The plain-data job both the worker and the inline walk run. */
function embedJob(taskDirPath: string, chrootMap: Record<string, string>, opts: EmbedOptions): EmbedJob {
  return {
    taskDir: taskDirPath,
    map: Object.entries(chrootMap),
    skip: [...opts.skip],
    euid: process.geteuid?.() ?? -1,
    egid: process.getegid?.() ?? -1,
    umask: currentUmask(),
    prev: opts.cache?.record,
  };
}

/**
 * Embeds every `hostSource → destination` of `chrootMap` into `taskDirPath` (which must exist),
 * in a worker thread so the event loop stays free. Missing sources are skipped. Resolves with
 * what was done; rejects with a {@link ChrootError} on the first failure, or with
 * `signal.reason` when aborted.
 *
 * @example
 * const stats = await embed(taskDir.dir, defaultChrootEnv, { skip: ['/var/lib/nomad/alloc'] });
 */
export function embed(taskDirPath: string, chrootMap: Record<string, string>, opts: EmbedOptions): Promise<ChrootStats> {
  const t0 = performance.now();
  const onProgress = opts.onProgress;
  const job: EmbedJob = { ...embedJob(taskDirPath, chrootMap, opts), progress: onProgress !== undefined };
  const signal = opts.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<ChrootStats>((resolve, reject) => {
    // A rebuild knows its total from the last build; a first build counts beside the walk.
    let total: number | undefined = opts.cache?.record ? opts.cache.record.others.reduce((a, b) => a + b, 0) : undefined;
    const counter =
      onProgress && total === undefined ? new Worker(COUNT_SOURCE, { eval: true, workerData: job.map.map(([src]) => src), execArgv: [] }) : undefined;
    counter?.once('message', (n: number) => (total = n));
    counter?.once('error', () => {}); // no total then: progress without one
    counter?.unref();
    // execArgv [] so the worker does not load the host's loaders (tsx) for a plain module.
    const worker = new Worker(WORKER_URL, { workerData: job, execArgv: [] });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      void counter?.terminate();
      fn();
    };
    const onAbort = () => {
      finish(() => reject(signal!.reason));
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { ok: boolean; result?: EmbedResult; message?: string; progress?: ChrootStats }) => {
      if (m.progress) {
        if (!settled) onProgress?.({ ...m.progress, ...(total !== undefined ? { total } : {}) });
        return;
      }
      finish(() => {
        if (!m.ok) return reject(new ChrootError(m.message ?? 'chroot build failed'));
        if (opts.cache) opts.cache.record = m.result!.record;
        resolve({ ...m.result!.stats, ms: performance.now() - t0 });
      });
    });
    worker.once('error', (err) => finish(() => reject(new ChrootError(`chroot build failed: ${err.message}`))));
    worker.once('exit', (c) => finish(() => reject(new ChrootError(`chroot build worker exited (${c})`))));
  });
}

/**
 * The same walk on the calling thread, blocking it. For callers already off the event loop
 * (their own worker) or tiny maps; {@link embed} is the one to use from the runtime.
 */
export async function embedInline(taskDirPath: string, chrootMap: Record<string, string>, opts: { skip: string[]; cache?: ChrootCache }): Promise<ChrootStats> {
  const fs = await import('node:fs');
  const path = await import('node:path');
  try {
    const { stats, record } = embedSync(fs, path, embedJob(taskDirPath, chrootMap, opts));
    if (opts.cache) opts.cache.record = record;
    return stats;
  } catch (err) {
    throw new ChrootError(errorText(err));
  }
}
