/**
 * The chroot walk (`embedSync`), a plain module so the chroot build's worker thread can load it
 * as it is (`embed-worker.mjs`) and the calling thread can import it (`embedInline`); its types
 * are `embed-walk.d.mts`. Everything it touches comes in through its arguments.
 * @module
 */
/**
 * The walk itself, synchronous: embeds `job.map` into `job.taskDir` and returns what it did.
 * Throws plain Errors; `embed` (chroot.ts) wraps them.
 */
export function embedSync(fs, path, job, progress) {
  const t0 = Date.now();
  // Progress at most every 200 ms, looked at every 1024 entries (Date.now is not free either).
  let ticks = 0;
  let lastTick = t0;
  // Filesystem timestamps come from a coarse clock that lags Date.now() by up to a tick, so
  // compare with margins: generous for host dirs, small for task-side dirs (whatever we wrote in
  // the last 100 ms of a build merely gets listed again next time).
  const SRC_MARGIN_MS = 2000;
  const DEST_MARGIN_MS = 100;
  const stats = { files: 0, dirs: 0, symlinks: 0, links: 0, copies: 0, bytes: 0, skipped: 0, ms: 0 };
  const { euid, egid, umask } = job;
  const isRoot = euid === 0;
  const code = (e) => e?.code;
  // The worker loads plain JavaScript only (no TypeScript loader), so no import of model/.
  const msg = (e) => (e instanceof Error ? e.message : String(e));
  const copyFallback = new Set(['EXDEV', 'EPERM', 'EACCES', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL']);
  const realOr = (p) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const destRel = (dest) => {
    const clean = path.posix.normalize(dest.replace(/^\/+/, ''));
    if (clean === '..' || clean.startsWith('../')) throw new Error(`chroot destination ${JSON.stringify(dest)} escapes the task dir`);
    return clean === '.' ? '' : clean.replace(/\/+$/, '');
  };
  const taskDir = fs.realpathSync(job.taskDir);
  const skipReal = new Set([taskDir]);
  const skipIds = new Set();
  for (const s of job.skip) {
    skipReal.add(realOr(s));
    const st = fs.statSync(s, { throwIfNoEntry: false });
    if (st) skipIds.add(`${st.dev}:${st.ino}`);
  }
  const underSkip = (p) => {
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
  const makeDir = (rel, src, checkSkip = false) => {
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
  const ensureChain = (rel, leafSrc) => {
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
  const linkOrCopy = (src, dest) => {
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
  const copySymlink = (src, dest) => {
    let target;
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
  const linkEmbeddedElsewhere = (src, rel) => {
    const target = fs.readlinkSync(src);
    const wanted = fs.realpathSync(src);
    const inChroot = path.posix.isAbsolute(target) ? path.posix.normalize(target) : path.posix.resolve('/' + path.posix.dirname(rel), target);
    for (const [s, d] of job.map) {
      let dest;
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
  const record = { key, t0, t1: 0, srcs: [], rels: [], first: [], count: [], others: [] };
  const states = [];
  const prevIdx = [];
  const enqueue = (src, rel, state, p) => {
    record.srcs.push(src);
    record.rels.push(rel);
    states.push(state);
    prevIdx.push(p);
  };
  const prevRoot = (src, rel) => {
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
    } else if (st.isFile() && st.uid === 0 && (st.mode & 0o004) === 0) {
      stats.skipped++; // root's and not readable by others: never embedded (see the walk below)
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
      else if (sst.mtimeMs < prev.t0 - SRC_MARGIN_MS && d.mtimeMs < prev.t1 - DEST_MARGIN_MS) {
        // Unchanged since the last build: its entries are the ones embedded then.
        const n = prev.count[p];
        for (let c = prev.first[p]; c < prev.first[p] + n; c++) enqueue(prev.srcs[c], prev.rels[c], 'recorded', c);
        record.count[qi] = n;
        record.others[qi] = prev.others[p];
        stats.skipped += prev.others[p];
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
    let present;
    if (state !== 'new') {
      try {
        present = new Map(fs.readdirSync(dest, { withFileTypes: true }).map((d) => [d.name, d.isDirectory()]));
      } catch (e) {
        throw new Error(`Couldn't read directory ${dest}: ${msg(e)}`);
      }
    }
    // Subdirectories this directory had last time, by name, to carry their records over.
    let prevKids;
    if (p >= 0 && prev) {
      prevKids = new Map();
      for (let c = prev.first[p]; c < prev.first[p] + prev.count[p]; c++) prevKids.set(path.posix.basename(prev.rels[c]), c);
    }
    let entries;
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
        // Root's files the task's user could not read on the host (shadow, gshadow, sudoers, ssh
        // host keys: no read bit for others) stay out: the alloc fs would serve them to its callers.
        const fst = fs.lstatSync(childSrc, { throwIfNoEntry: false });
        if (!fst || (fst.uid === 0 && (fst.mode & 0o004) === 0)) stats.skipped++;
        else linkOrCopy(childSrc, dest + '/' + name);
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
