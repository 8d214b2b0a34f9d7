/**
 * The chroot walk (`embedSync`), a plain module so the chroot build's worker thread can load it
 * as it is (`embed-worker.mjs`) and the calling thread can import it (`embedInline`); its types
 * are `embed-walk.d.mts`. Everything it touches comes in through its arguments.
 *
 * The walk is breadth-first over a queue of directories (`record.srcs`/`record.rels`, with a state
 * per entry): the mapped roots first ({@link ChrootWalk#embedRoots}), then each queued directory's
 * entries ({@link ChrootWalk#walkDir}). A directory unchanged since the previous build of the same
 * map is not listed again: its recorded children are queued as they were.
 * @module
 */

// Filesystem timestamps come from a coarse clock that lags Date.now() by up to a tick, so
// compare with margins: generous for host dirs, small for task-side dirs (whatever we wrote in
// the last 100 ms of a build merely gets listed again next time).
const SRC_MARGIN_MS = 2000;
const DEST_MARGIN_MS = 100;
/** Link errors after which a file is copied instead. */
const COPY_FALLBACK = new Set(['EXDEV', 'EPERM', 'EACCES', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL']);

const code = (e) => e?.code;
// The worker loads plain JavaScript only (no TypeScript loader), so no import of model/.
const msg = (e) => (e instanceof Error ? e.message : String(e));

/** Root's files the task's user could not read on the host (shadow, sudoers, ssh host keys). */
const unreadableRootFile = (st) => st.uid === 0 && (st.mode & 0o004) === 0;

/** One build of a chroot: the job, what it did so far, and the record the next build starts from. */
class ChrootWalk {
  constructor(fs, path, job, progress) {
    this.fs = fs;
    this.path = path;
    this.job = job;
    this.progress = progress;
    this.t0 = Date.now();
    // Progress at most every 200 ms, looked at every 1024 entries (Date.now is not free either).
    this.ticks = 0;
    this.lastTick = this.t0;
    this.stats = { files: 0, dirs: 0, symlinks: 0, links: 0, copies: 0, bytes: 0, skipped: 0, ms: 0 };
    this.isRoot = job.euid === 0;
    this.taskDir = fs.realpathSync(job.taskDir);
    this.skipReal = new Set([this.taskDir]);
    this.skipIds = new Set();
    for (const s of job.skip) {
      this.skipReal.add(this.realOr(s));
      const st = fs.statSync(s, { throwIfNoEntry: false });
      if (st) this.skipIds.add(`${st.dev}:${st.ino}`);
    }
    const key = JSON.stringify([this.taskDir, job.map, job.skip]);
    this.prev = job.prev && job.prev.key === key ? job.prev : undefined;
    this.record = { key, t0: this.t0, t1: 0, srcs: [], rels: [], first: [], count: [], others: [] };
    this.states = [];
    this.prevIdx = [];
  }

  /** Embeds the map and returns what it did. */
  run() {
    this.embedRoots();
    for (let qi = 0; qi < this.record.srcs.length; qi++) this.walkDir(qi);
    this.record.t1 = Date.now();
    this.stats.ms = this.record.t1 - this.t0;
    return { stats: this.stats, record: this.record };
  }

  realOr(p) {
    try {
      return this.fs.realpathSync(p);
    } catch {
      return this.path.resolve(p);
    }
  }

  /** A mapping's destination relative to the task dir; one that climbs out of it is refused. */
  destRel(dest) {
    const clean = this.path.posix.normalize(dest.replace(/^\/+/, ''));
    if (clean === '..' || clean.startsWith('../')) throw new Error(`chroot destination ${JSON.stringify(dest)} escapes the task dir`);
    return clean === '.' ? '' : clean.replace(/\/+$/, '');
  }

  underSkip(p) {
    for (const s of this.skipReal) if (p === s || p.startsWith(s === '/' ? s : s + '/')) return true;
    return false;
  }

  skippedId(st) {
    return this.skipIds.has(`${st.dev}:${st.ino}`);
  }

  /**
   * Makes `<taskDir>/<rel>` with the mode and owner of its source directory `src` (Nomad's embed
   * takes them from what it embeds, never from the host's same path: that path may not exist or
   * be a file, e.g. a dir mapped to `/bin/test` where the host has `/usr/bin/test`). A directory
   * with no source (a parent the mapping implies) gets 0755, owned by the client.
   * `checkSkip` refuses a source that is excluded (the client alloc dir): 'made', 'exists' (lost a
   * race) or 'skip'.
   */
  makeDir(rel, src, checkSkip = false) {
    const { fs, job } = this;
    const dest = this.path.join(this.taskDir, rel);
    const from = src === undefined ? undefined : fs.statSync(src, { throwIfNoEntry: false });
    const source = from?.isDirectory() ? from : undefined;
    if (source && checkSkip && this.skippedId(source)) return 'skip';
    const mode = source ? source.mode & 0o7777 : 0o755;
    try {
      fs.mkdirSync(dest, { mode });
    } catch (e) {
      if (code(e) === 'EEXIST' && fs.lstatSync(dest).isDirectory()) return 'exists';
      throw new Error(`Couldn't create destination directory ${dest}: ${msg(e)}`);
    }
    try {
      if (source && this.isRoot && (source.uid !== job.euid || source.gid !== job.egid)) fs.chownSync(dest, source.uid, source.gid);
      if ((mode & ~job.umask & 0o1777) !== mode) fs.chmodSync(dest, mode);
    } catch (e) {
      throw new Error(`Couldn't set owner/mode of ${dest}: ${msg(e)}`);
    }
    this.stats.dirs++;
    return 'made';
  }

  /** Makes each missing component of `rel`, the last one from `leafSrc`; refuses to go through anything but a directory. */
  ensureChain(rel, leafSrc) {
    if (rel === '' || rel === '.') return;
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const r = parts.slice(0, i).join('/');
      const l = this.fs.lstatSync(this.path.join(this.taskDir, r), { throwIfNoEntry: false });
      if (l?.isDirectory()) continue;
      if (l) throw new Error(`Couldn't create destination directory ${this.path.join(this.taskDir, r)}: exists and is not a directory`);
      this.makeDir(r, i === parts.length ? leafSrc : undefined);
    }
  }

  /** Hard-links `src` at `dest`, or copies it (owner and mode kept) where a link cannot be made. */
  linkOrCopy(src, dest) {
    const { fs, stats } = this;
    try {
      fs.linkSync(src, dest);
      stats.links++;
      stats.files++;
      return;
    } catch (e) {
      const c = code(e);
      if (c === 'EEXIST' || c === 'ENOENT') return void stats.skipped++; // kept / vanished mid-walk
      if (!c || !COPY_FALLBACK.has(c)) throw new Error(`Couldn't link ${src} to ${dest}: ${msg(e)}`);
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
      if (this.isRoot) fs.chownSync(dest, st.uid, st.gid); // before chmod: chown clears setuid/setgid
      fs.chmodSync(dest, st.mode & 0o7777);
    } catch (e) {
      throw new Error(`Couldn't set owner/mode of ${dest}: ${msg(e)}`);
    }
    stats.copies++;
    stats.files++;
    stats.bytes += st.size;
  }

  /** Recreates the symlink `src` at `dest`, its target as written. */
  copySymlink(src, dest) {
    let target;
    try {
      target = this.fs.readlinkSync(src);
    } catch (e) {
      if (code(e) === 'ENOENT') return void this.stats.skipped++;
      throw new Error(`Couldn't resolve symlink for ${src}: ${msg(e)}`);
    }
    try {
      this.fs.symlinkSync(target, dest);
      this.stats.symlinks++;
    } catch (e) {
      if (code(e) === 'EEXIST') return void this.stats.skipped++;
      throw new Error(`Couldn't create symlink: ${msg(e)}`);
    }
  }

  /**
   * True when the symlink `src`, placed at `/<rel>` in the chroot, resolves there to a directory
   * another entry embeds from the same real host directory (e.g. /bin -> usr/bin with /usr
   * mapped): recreating the link gives the same view, as `cp -a` does, without embedding the
   * tree twice. Otherwise Nomad's behaviour applies: the link is followed.
   */
  linkEmbeddedElsewhere(src, rel) {
    const { fs, path } = this;
    const target = fs.readlinkSync(src);
    const wanted = fs.realpathSync(src);
    const inChroot = path.posix.isAbsolute(target) ? path.posix.normalize(target) : path.posix.resolve('/' + path.posix.dirname(rel), target);
    for (const [s, d] of this.job.map) {
      let dest;
      try {
        dest = '/' + this.destRel(d);
      } catch {
        continue;
      }
      const under = dest === '/' ? inChroot : inChroot === dest ? '' : inChroot.startsWith(dest + '/') ? inChroot.slice(dest.length + 1) : undefined;
      if (under === undefined || dest === '/' + rel) continue;
      const l = fs.lstatSync(s, { throwIfNoEntry: false });
      if (!l || l.isSymbolicLink()) continue; // only trust entries that are walked for real
      if (this.realOr(path.join(s, under)) === wanted) return true;
    }
    return false;
  }

  /** Queues a directory to walk: `state` is 'new', 'exists' or 'recorded' (with `p`, its index in the previous record). */
  enqueue(src, rel, state, p) {
    this.record.srcs.push(src);
    this.record.rels.push(rel);
    this.states.push(state);
    this.prevIdx.push(p);
  }

  /** The previous record's index of the root `src` mapped at `rel`, or -1. */
  prevRoot(src, rel) {
    const { prev } = this;
    if (!prev) return -1;
    for (let i = 0; i < prev.rels.length; i++) if (prev.rels[i] === rel && prev.srcs[i] === src) return i;
    return -1;
  }

  /** Embeds each mapping's source: a file or symlink at once, a directory queued for the walk. */
  embedRoots() {
    const { fs, path, stats } = this;
    for (const [source, dest] of this.job.map) {
      const rel = this.destRel(dest);
      const src = path.resolve(source);
      const st = fs.statSync(src, { throwIfNoEntry: false });
      if (!st) {
        stats.skipped++;
        continue;
      }
      const real = fs.realpathSync(src);
      if (this.underSkip(real) || this.skippedId(st)) {
        stats.skipped++;
        continue;
      }
      const parent = path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel);
      if (rel !== '' && fs.lstatSync(src).isSymbolicLink() && this.linkEmbeddedElsewhere(src, rel)) {
        this.ensureChain(parent, path.dirname(src));
        this.copySymlink(src, path.join(this.taskDir, rel));
      } else if (st.isDirectory()) {
        this.ensureChain(rel, real);
        const p = this.prevRoot(real, rel);
        this.enqueue(real, rel, p >= 0 ? 'recorded' : 'unknown', p);
      } else if (st.isFile() && unreadableRootFile(st)) {
        stats.skipped++; // never embedded (see walkDir)
      } else if (st.isFile()) {
        this.ensureChain(parent, path.dirname(src));
        this.linkOrCopy(real, path.join(this.taskDir, rel));
      } else {
        stats.skipped++;
      }
    }
  }

  /**
   * For a queued directory the previous build recorded: 'skip' when it is gone or no longer a
   * directory, 'reused' when unchanged since (its recorded children are queued as they were),
   * else the state to walk it in ('new' or 'exists').
   */
  checkRecorded(qi, src, dest) {
    const { fs, prev, record } = this;
    const p = this.prevIdx[qi];
    const d = fs.lstatSync(dest, { throwIfNoEntry: false });
    const sst = fs.statSync(src, { throwIfNoEntry: false });
    if (!sst?.isDirectory() || (d && !d.isDirectory())) return 'skip';
    if (!d) return 'new';
    if (!(sst.mtimeMs < prev.t0 - SRC_MARGIN_MS && d.mtimeMs < prev.t1 - DEST_MARGIN_MS)) return 'exists';
    const n = prev.count[p];
    for (let c = prev.first[p]; c < prev.first[p] + n; c++) this.enqueue(prev.srcs[c], prev.rels[c], 'recorded', c);
    record.count[qi] = n;
    record.others[qi] = prev.others[p];
    this.stats.skipped += prev.others[p];
    return 'reused';
  }

  /** Walks the queued directory `qi`: makes it when new, then embeds its entries and queues its subdirectories. */
  walkDir(qi) {
    const { fs, record, stats } = this;
    const src = record.srcs[qi];
    const rel = record.rels[qi];
    let state = this.states[qi];
    record.first[qi] = record.srcs.length;
    record.count[qi] = 0;
    record.others[qi] = 0;
    const dest = rel === '' ? this.taskDir : this.path.join(this.taskDir, rel);
    if (state === 'recorded') {
      state = this.checkRecorded(qi, src, dest);
      if (state === 'skip') return void stats.skipped++; // gone from the host, or no longer a directory in the task: leave it
      if (state === 'reused') return;
    }
    if (state === 'new') {
      const made = this.makeDir(rel, src, true);
      if (made === 'skip') return void stats.skipped++;
      if (made === 'exists') state = 'exists';
    }
    // An existing destination is listed once: present children are then skipped for free.
    let present;
    if (state !== 'new') {
      try {
        present = new Map(fs.readdirSync(dest, { withFileTypes: true }).map((d) => [d.name, d.isDirectory()]));
      } catch (e) {
        throw new Error(`Couldn't read directory ${dest}: ${msg(e)}`);
      }
    }
    let entries;
    try {
      entries = fs.readdirSync(src, { withFileTypes: true });
    } catch (e) {
      if (code(e) === 'ENOENT') return;
      throw new Error(`Couldn't read directory ${src}: ${msg(e)}`);
    }
    const prevKids = this.prevChildren(this.prevIdx[qi]);
    for (const ent of entries) this.embedEntry(qi, ent, src, rel, dest, present, prevKids);
  }

  /** Subdirectories the directory at previous index `p` had last time, by name, to carry their records over. */
  prevChildren(p) {
    const { prev } = this;
    if (!(p >= 0 && prev)) return undefined;
    const kids = new Map();
    for (let c = prev.first[p]; c < prev.first[p] + prev.count[p]; c++) kids.set(this.path.posix.basename(prev.rels[c]), c);
    return kids;
  }

  /** One entry of the directory `qi`: a subdirectory is queued, anything else embedded now (or skipped). */
  embedEntry(qi, ent, src, rel, dest, present, prevKids) {
    const { record, stats } = this;
    const name = ent.name;
    const childSrc = src === '/' ? '/' + name : src + '/' + name;
    const have = present?.get(name);
    if (ent.isDirectory()) {
      if (this.skipReal.has(childSrc)) stats.skipped++;
      // Never walk into something that is not a directory (maybe a link the task planted).
      else if (have === false) stats.skipped++;
      else {
        const c = prevKids?.get(name) ?? -1;
        this.enqueue(childSrc, rel === '' ? name : rel + '/' + name, have ? (c >= 0 ? 'recorded' : 'exists') : 'new', c);
        record.count[qi]++;
      }
      return;
    }
    record.others[qi]++;
    if (have !== undefined) {
      stats.skipped++; // already embedded: keep it
    } else if (ent.isFile()) {
      // Root's files the task's user could not read on the host stay out: the alloc fs would
      // serve them to its callers.
      const fst = this.fs.lstatSync(childSrc, { throwIfNoEntry: false });
      if (!fst || unreadableRootFile(fst)) stats.skipped++;
      else this.linkOrCopy(childSrc, dest + '/' + name);
    } else if (ent.isSymbolicLink()) {
      this.copySymlink(childSrc, dest + '/' + name);
    } else {
      stats.skipped++; // devices, sockets, fifos
    }
    this.tick();
  }

  /** Reports progress about every 200 ms, looking at the clock every 1024 entries. */
  tick() {
    if (this.progress === undefined || (++this.ticks & 1023) !== 0) return;
    const now = Date.now();
    if (now - this.lastTick < 200) return;
    this.lastTick = now;
    this.progress({ ...this.stats, ms: now - this.t0 });
  }
}

/**
 * The walk itself, synchronous: embeds `job.map` into `job.taskDir` and returns what it did.
 * Throws plain Errors; `embed` (chroot.ts) wraps them.
 */
export function embedSync(fs, path, job, progress) {
  return new ChrootWalk(fs, path, job, progress).run();
}
