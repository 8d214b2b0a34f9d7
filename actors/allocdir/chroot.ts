/**
 * Chroot building: embeds host paths into a task dir, after Nomad's `embedDirs`.
 *
 * For each `source → destination` of the chroot map, the source tree is walked breadth-first and
 * recreated under the task dir: regular files are hard-linked (copied when linking fails, e.g.
 * across filesystems or under `protected_hardlinks`), symlinks are recreated with their target
 * text, devices, sockets and fifos are skipped, and directories are created with the owner and
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
import type * as FS from 'node:fs';
import type * as PATH from 'node:path';
import { Worker } from 'node:worker_threads';
import { ChrootError } from './errors.ts';

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

/** The input of {@link embedSync}: plain data, so it can cross to a worker. */
interface EmbedJob {
  taskDir: string;
  map: Array<[string, string]>;
  skip: string[];
  euid: number;
  egid: number;
  umask: number;
  prev?: ChrootRecord;
}

interface EmbedResult {
  stats: ChrootStats;
  record: ChrootRecord;
}

/**
 * The walk itself, synchronous and self-contained: it only uses its arguments, so its source
 * text can be evaluated in a worker (see {@link embed}). Throws plain Errors; `embed` wraps them.
 */
function embedSync(fs: typeof FS, path: typeof PATH, job: EmbedJob, progress?: (stats: ChrootStats) => void): EmbedResult {
  const t0 = Date.now();
  // Progress at most every 200 ms, looked at every 1024 entries (Date.now is not free either).
  let ticks = 0;
  let lastTick = t0;
  // Filesystem timestamps come from a coarse clock that lags Date.now() by up to a tick, so
  // compare with margins: generous for host dirs, small for task-side dirs (whatever we wrote in
  // the last 100 ms of a build merely gets listed again next time).
  const SRC_MARGIN_MS = 2000;
  const DEST_MARGIN_MS = 100;
  const stats: ChrootStats = { files: 0, dirs: 0, symlinks: 0, links: 0, copies: 0, bytes: 0, skipped: 0, ms: 0 };
  const { euid, egid, umask } = job;
  const isRoot = euid === 0;
  const code = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;
  const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const copyFallback = new Set(['EXDEV', 'EPERM', 'EACCES', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL']);
  const realOr = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const destRel = (dest: string) => {
    const clean = path.posix.normalize(dest.replace(/^\/+/, ''));
    if (clean === '..' || clean.startsWith('../')) throw new Error(`chroot destination ${JSON.stringify(dest)} escapes the task dir`);
    return clean === '.' ? '' : clean.replace(/\/+$/, '');
  };

  const taskDir = fs.realpathSync(job.taskDir);
  const skipReal = new Set<string>([taskDir]);
  const skipIds = new Set<string>();
  for (const s of job.skip) {
    skipReal.add(realOr(s));
    const st = fs.statSync(s, { throwIfNoEntry: false });
    if (st) skipIds.add(`${st.dev}:${st.ino}`);
  }
  const underSkip = (p: string) => {
    for (const s of skipReal) if (p === s || p.startsWith(s === '/' ? s : s + '/')) return true;
    return false;
  };

  /**
   * Makes `<taskDir>/<rel>` with the mode and owner of its source directory `src` (Nomad's embed
   * takes them from what it embeds, never from the host's same path: that path may not exist or
   * be a file, e.g. a dir mapped to `/bin/test` where the host has `/usr/bin/test`). A directory
   * with no source (a parent the mapping implies) gets 0755, owned by the client.
   * `checkSkip` refuses a source that is excluded (the client alloc dir): 'made', 'exists' (lost a
   * race) or 'skip'.
   */
  const makeDir = (rel: string, src?: string, checkSkip = false): 'made' | 'exists' | 'skip' => {
    const dest = path.join(taskDir, rel);
    const from = src === undefined ? undefined : fs.statSync(src, { throwIfNoEntry: false });
    const source = from?.isDirectory() ? from : undefined;
    if (source && checkSkip && skipIds.has(`${source.dev}:${source.ino}`)) return 'skip';
    const mode = source ? source.mode & 0o7777 : 0o755;
    try {
      fs.mkdirSync(dest, { mode });
    } catch (e) {
      if (code(e) === 'EEXIST' && fs.lstatSync(dest).isDirectory()) return 'exists';
      throw new Error(`Couldn't create destination directory ${dest}: ${msg(e)}`);
    }
    try {
      if (source && isRoot && (source.uid !== euid || source.gid !== egid)) fs.chownSync(dest, source.uid, source.gid);
      if ((mode & ~umask & 0o1777) !== mode) fs.chmodSync(dest, mode);
    } catch (e) {
      throw new Error(`Couldn't set owner/mode of ${dest}: ${msg(e)}`);
    }
    stats.dirs++;
    return 'made';
  };

  /**
   * Makes each missing component of `rel`, the last one from `leafSrc`; refuses to go through
   * anything but a directory.
   */
  const ensureChain = (rel: string, leafSrc?: string) => {
    if (rel === '' || rel === '.') return;
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const r = parts.slice(0, i).join('/');
      const l = fs.lstatSync(path.join(taskDir, r), { throwIfNoEntry: false });
      if (l?.isDirectory()) continue;
      if (l) throw new Error(`Couldn't create destination directory ${path.join(taskDir, r)}: exists and is not a directory`);
      makeDir(r, i === parts.length ? leafSrc : undefined);
    }
  };

  const linkOrCopy = (src: string, dest: string) => {
    try {
      fs.linkSync(src, dest);
      stats.links++;
      stats.files++;
      return;
    } catch (e) {
      const c = code(e);
      if (c === 'EEXIST' || c === 'ENOENT') return void stats.skipped++; // kept / vanished mid-walk
      if (!c || !copyFallback.has(c)) throw new Error(`Couldn't link ${src} to ${dest}: ${msg(e)}`);
    }
    const st = fs.lstatSync(src, { throwIfNoEntry: false });
    if (!st) return void stats.skipped++;
    try {
      fs.copyFileSync(src, dest, fs.constants.COPYFILE_EXCL);
    } catch (e) {
      if (code(e) === 'EEXIST') return void stats.skipped++;
      throw new Error(`Couldn't copy ${src} to ${dest}: ${msg(e)}`);
    }
    try {
      if (isRoot) fs.chownSync(dest, st.uid, st.gid); // before chmod: chown clears setuid/setgid
      fs.chmodSync(dest, st.mode & 0o7777);
    } catch (e) {
      throw new Error(`Couldn't set owner/mode of ${dest}: ${msg(e)}`);
    }
    stats.copies++;
    stats.files++;
    stats.bytes += st.size;
  };

  const copySymlink = (src: string, dest: string) => {
    let target: string;
    try {
      target = fs.readlinkSync(src);
    } catch (e) {
      if (code(e) === 'ENOENT') return void stats.skipped++;
      throw new Error(`Couldn't resolve symlink for ${src}: ${msg(e)}`);
    }
    try {
      fs.symlinkSync(target, dest);
      stats.symlinks++;
    } catch (e) {
      if (code(e) === 'EEXIST') return void stats.skipped++;
      throw new Error(`Couldn't create symlink: ${msg(e)}`);
    }
  };

  /**
   * True when the symlink `src`, placed at `/<rel>` in the chroot, resolves there to a directory
   * another entry embeds from the same real host directory (e.g. /bin -> usr/bin with /usr
   * mapped): recreating the link gives the same view, as `cp -a` does, without embedding the
   * tree twice. Otherwise Nomad's behaviour applies: the link is followed.
   */
  const linkEmbeddedElsewhere = (src: string, rel: string): boolean => {
    const target = fs.readlinkSync(src);
    const wanted = fs.realpathSync(src);
    const inChroot = path.posix.isAbsolute(target) ? path.posix.normalize(target) : path.posix.resolve('/' + path.posix.dirname(rel), target);
    for (const [s, d] of job.map) {
      let dest: string;
      try {
        dest = '/' + destRel(d);
      } catch {
        continue;
      }
      const under = dest === '/' ? inChroot : inChroot === dest ? '' : inChroot.startsWith(dest + '/') ? inChroot.slice(dest.length + 1) : undefined;
      if (under === undefined || dest === '/' + rel) continue;
      const l = fs.lstatSync(s, { throwIfNoEntry: false });
      if (!l || l.isSymbolicLink()) continue; // only trust entries that are walked for real
      if (realOr(path.join(s, under)) === wanted) return true;
    }
    return false;
  };

  const key = JSON.stringify([taskDir, job.map, job.skip]);
  const prev = job.prev && job.prev.key === key ? job.prev : undefined;
  const record: ChrootRecord = { key, t0, t1: 0, srcs: [], rels: [], first: [], count: [], others: [] };

  // Breadth-first: a FIFO of directories (record.srcs/rels ARE the queue). `state` is what we
  // know of the destination; `prevIdx` is the directory's index in the previous record, or -1.
  type State = 'new' | 'exists' | 'unknown' | 'recorded';
  const states: State[] = [];
  const prevIdx: number[] = [];
  const enqueue = (src: string, rel: string, state: State, p: number) => {
    record.srcs.push(src);
    record.rels.push(rel);
    states.push(state);
    prevIdx.push(p);
  };
  const prevRoot = (src: string, rel: string) => {
    if (!prev) return -1;
    for (let i = 0; i < prev.rels.length; i++) if (prev.rels[i] === rel && prev.srcs[i] === src) return i;
    return -1;
  };

  for (const [source, dest] of job.map) {
    const rel = destRel(dest);
    const src = path.resolve(source);
    const st = fs.statSync(src, { throwIfNoEntry: false });
    if (!st) {
      stats.skipped++;
      continue;
    }
    const real = fs.realpathSync(src);
    if (underSkip(real) || skipIds.has(`${st.dev}:${st.ino}`)) {
      stats.skipped++;
      continue;
    }
    const parent = path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel);
    if (rel !== '' && fs.lstatSync(src).isSymbolicLink() && linkEmbeddedElsewhere(src, rel)) {
      ensureChain(parent, path.dirname(src));
      copySymlink(src, path.join(taskDir, rel));
    } else if (st.isDirectory()) {
      ensureChain(rel, real);
      const p = prevRoot(real, rel);
      enqueue(real, rel, p >= 0 ? 'recorded' : 'unknown', p);
    } else if (st.isFile()) {
      ensureChain(parent, path.dirname(src));
      linkOrCopy(real, path.join(taskDir, rel));
    } else {
      stats.skipped++;
    }
  }

  for (let qi = 0; qi < record.srcs.length; qi++) {
    const src = record.srcs[qi];
    const rel = record.rels[qi];
    let state = states[qi];
    const p = prevIdx[qi];
    record.first[qi] = record.srcs.length;
    record.count[qi] = 0;
    record.others[qi] = 0;
    const dest = rel === '' ? taskDir : path.join(taskDir, rel);
    if (state === 'recorded') {
      const d = fs.lstatSync(dest, { throwIfNoEntry: false });
      const sst = fs.statSync(src, { throwIfNoEntry: false });
      if (!sst?.isDirectory() || (d && !d.isDirectory())) {
        stats.skipped++; // gone from the host, or no longer a directory in the task: leave it
        continue;
      }
      if (!d) state = 'new';
      else if (sst.mtimeMs < prev!.t0 - SRC_MARGIN_MS && d.mtimeMs < prev!.t1 - DEST_MARGIN_MS) {
        // Unchanged since the last build: its entries are the ones embedded then.
        const n = prev!.count[p];
        for (let c = prev!.first[p]; c < prev!.first[p] + n; c++) enqueue(prev!.srcs[c], prev!.rels[c], 'recorded', c);
        record.count[qi] = n;
        record.others[qi] = prev!.others[p];
        stats.skipped += prev!.others[p];
        continue;
      } else state = 'exists';
    }
    if (state === 'new') {
      const made = makeDir(rel, src, true);
      if (made === 'skip') {
        stats.skipped++;
        continue;
      }
      if (made === 'exists') state = 'exists';
    }
    // An existing destination is listed once: present children are then skipped for free.
    let present: Map<string, boolean> | undefined;
    if (state !== 'new') {
      try {
        present = new Map(fs.readdirSync(dest, { withFileTypes: true }).map((d) => [d.name, d.isDirectory()] as [string, boolean]));
      } catch (e) {
        throw new Error(`Couldn't read directory ${dest}: ${msg(e)}`);
      }
    }
    // Subdirectories this directory had last time, by name, to carry their records over.
    let prevKids: Map<string, number> | undefined;
    if (p >= 0 && prev) {
      prevKids = new Map();
      for (let c = prev.first[p]; c < prev.first[p] + prev.count[p]; c++) prevKids.set(path.posix.basename(prev.rels[c]), c);
    }
    let entries: FS.Dirent[];
    try {
      entries = fs.readdirSync(src, { withFileTypes: true });
    } catch (e) {
      if (code(e) === 'ENOENT') continue;
      throw new Error(`Couldn't read directory ${src}: ${msg(e)}`);
    }
    for (const ent of entries) {
      const name = ent.name;
      const childSrc = src === '/' ? '/' + name : src + '/' + name;
      const have = present?.get(name);
      if (ent.isDirectory()) {
        if (skipReal.has(childSrc)) stats.skipped++;
        // Never walk into something that is not a directory (maybe a link the task planted).
        else if (have === false) stats.skipped++;
        else {
          const c = prevKids?.get(name) ?? -1;
          enqueue(childSrc, rel === '' ? name : rel + '/' + name, have ? (c >= 0 ? 'recorded' : 'exists') : 'new', c);
          record.count[qi]++;
        }
        continue;
      }
      record.others[qi]++;
      if (have !== undefined) {
        stats.skipped++; // already embedded: keep it
      } else if (ent.isFile()) {
        linkOrCopy(childSrc, dest + '/' + name);
      } else if (ent.isSymbolicLink()) {
        copySymlink(childSrc, dest + '/' + name);
      } else {
        stats.skipped++; // devices, sockets, fifos
      }
      if (progress !== undefined && (++ticks & 1023) === 0) {
        const now = Date.now();
        if (now - lastTick >= 200) {
          lastTick = now;
          progress({ ...stats, ms: now - t0 });
        }
      }
    }
  }
  record.t1 = Date.now();
  stats.ms = record.t1 - t0;
  return { stats, record };
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

// Worker source: the walk above, evaluated as a plain script. `__name` is a helper some
// TypeScript loaders (tsx/esbuild keepNames) insert into function bodies.
const WORKER_SOURCE = `
const __name = (f) => f;
const { parentPort, workerData } = require('node:worker_threads');
const embedSync = ${embedSync.toString()};
try {
  const progress = workerData.progress ? (stats) => parentPort.postMessage({ progress: stats }) : undefined;
  parentPort.postMessage({ ok: true, result: embedSync(require('node:fs'), require('node:path'), workerData, progress) });
} catch (e) {
  parentPort.postMessage({ ok: false, message: e && e.message ? e.message : String(e) });
}
`;

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
  const job = { ...embedJob(taskDirPath, chrootMap, opts), progress: onProgress !== undefined };
  const signal = opts.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<ChrootStats>((resolve, reject) => {
    // execArgv [] so the worker does not load the host's loaders (tsx) for a plain script.
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: job, execArgv: [] });
    // A rebuild knows its total from the last build; a first build counts beside the walk.
    let total: number | undefined = opts.cache?.record ? opts.cache.record.others.reduce((a, b) => a + b, 0) : undefined;
    const counter =
      onProgress && total === undefined ? new Worker(COUNT_SOURCE, { eval: true, workerData: job.map.map(([src]) => src), execArgv: [] }) : undefined;
    counter?.once('message', (n: number) => (total = n));
    counter?.once('error', () => {}); // no total then: progress without one
    counter?.unref();
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
    throw new ChrootError(err instanceof Error ? err.message : String(err));
  }
}
