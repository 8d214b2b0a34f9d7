/**
 * Mount helpers for alloc and task dirs (Linux, root only).
 *
 * Spawning `mount` for every tmpfs and bind mount costs a fork+exec of a setuid-aware binary
 * (measured ~48x over a floor). Instead a single long-lived helper process calls libc's
 * `mount(2)` / `umount2(2)` through python3's ctypes, reading JSON-lines requests on stdin and
 * answering on stdout. It is started lazily, unref'd while idle so it never keeps the host alive,
 * and restarted if it dies. Without python3, each call spawns `mount` / `umount` instead.
 * Mount state is always read back from `/proc/self/mountinfo`.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { MountError } from './errors.ts';

// Flags from <sys/mount.h>.
const MS_RDONLY = 1;
const MS_NOSUID = 2;
const MS_NODEV = 4;
const MS_NOEXEC = 8;
const MS_REMOUNT = 32;
const MS_BIND = 4096;
const MNT_DETACH = 2;
const UMOUNT_NOFOLLOW = 8;

/** The helper: one request per line in, one answer per line out, matched by id. */
const HELPER_SOURCE = String.raw`
import ctypes, ctypes.util, errno, json, os, sys
try:
    libc = ctypes.CDLL(None, use_errno=True); libc.mount
except Exception:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
def b(s):
    return None if s is None else s.encode()
while True:
    line = sys.stdin.readline()
    if not line:
        break
    rid = None
    try:
        r = json.loads(line); rid = r.get("id"); op = r.get("op")
        if op == "mount":
            rc = libc.mount(b(r.get("source")), b(r["target"]), b(r.get("fstype")), int(r.get("flags", 0)), b(r.get("data")))
        elif op == "umount":
            rc = libc.umount2(b(r["target"]), int(r.get("flags", 0)))
        else:
            rc = 0
        if rc != 0:
            e = ctypes.get_errno()
            out = {"id": rid, "code": errno.errorcode.get(e, str(e)), "message": os.strerror(e)}
        else:
            out = {"id": rid, "ok": True}
    except Exception as ex:
        out = {"id": rid, "code": "EHELPER", "message": str(ex)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
`;

interface Request {
  op: 'mount' | 'umount' | 'ping';
  source?: string | null;
  target?: string;
  fstype?: string | null;
  flags?: number;
  data?: string | null;
}
interface Answer {
  id: number;
  ok?: boolean;
  code?: string;
  message?: string;
}

/** The long-lived python3 helper; `undefined` once we know python3 cannot run. */
class MountHelper {
  #child?: ChildProcess;
  #nextId = 1;
  #pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  #unavailable = false;

  get unavailable(): boolean {
    return this.#unavailable;
  }

  request(req: Request): Promise<Answer> {
    const child = this.#ensure();
    const id = this.#nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#setRef(true);
      child.stdin!.write(JSON.stringify({ ...req, id }) + '\n');
    });
  }

  shutdown(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.ref(); // an idle helper is unref'd: without this the host could exit before 'exit' fires
      child.stdin!.end(); // EOF: the helper's loop ends and it exits
    });
  }

  #ensure(): ChildProcess {
    if (this.#child) return this.#child;
    const child = spawn(pythonPath(), ['-u', '-c', HELPER_SOURCE], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.#child = child;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      let ans: Answer;
      try {
        ans = JSON.parse(line) as Answer;
      } catch {
        return;
      }
      const p = this.#pending.get(ans.id);
      if (!p) return;
      this.#pending.delete(ans.id);
      if (this.#pending.size === 0) this.#setRef(false);
      p.resolve(ans);
    });
    const fail = (err: Error) => {
      if (this.#child === child) this.#child = undefined; // restart on next request
      const pending = [...this.#pending.values()];
      this.#pending.clear();
      for (const p of pending) p.reject(err);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') this.#unavailable = true;
      fail(err);
    });
    child.on('exit', (code, sig) => fail(new Error(`mount helper exited (${sig ?? code})`)));
    child.stdin!.on('error', () => undefined); // EPIPE after a crash surfaces through 'exit'
    this.#setRef(false);
    return child;
  }

  /** Keep the host alive only while a request is in flight. */
  #setRef(on: boolean): void {
    const c = this.#child;
    if (!c) return;
    const handles = [c, c.stdin, c.stdout] as unknown as Array<{ ref?: () => void; unref?: () => void } | null>;
    for (const h of handles) (on ? h?.ref : h?.unref)?.call(h);
  }
}

/** The system python3 when present: version-manager shims (pyenv) add ~300 ms per start. */
function pythonPath(): string {
  for (const p of ['/usr/bin/python3', '/usr/local/bin/python3']) if (existsSync(p)) return p;
  return 'python3';
}

const helper = new MountHelper();
let forceSpawn = false;

/** How mounts are performed: the python3 helper, or spawning `mount`/`umount`. */
export type MountMethod = 'helper' | 'spawn';

/**
 * Chooses how mounts are performed (tests and benchmarks). `'helper'` is the default; it falls
 * back to `'spawn'` by itself when python3 cannot be started.
 */
export function setMountMethod(method: MountMethod): void {
  forceSpawn = method === 'spawn';
}

/** Stops the mount helper process if it is running. Safe to call at any time. */
export function shutdownMountHelper(): Promise<void> {
  return helper.shutdown();
}

let holders = 0;

/**
 * Marks one more user of the mount helper (a client); the returned function releases it, and
 * the last release stops the helper, so it never outlives `client.shutdown()`. (A later mount
 * simply starts it again.)
 */
export function holdMountHelper(): () => Promise<void> {
  holders++;
  let released = false;
  return () => {
    if (released) return Promise.resolve();
    released = true;
    return --holders === 0 ? helper.shutdown() : Promise.resolve();
  };
}

async function sysMount(op: 'mount' | 'umount', req: Request, argv: string[], target: string): Promise<void> {
  if (!forceSpawn && !helper.unavailable) {
    let ans: Answer | undefined;
    try {
      ans = await helper.request(req);
    } catch {
      // The helper could not start or died mid-request; fall through to spawning.
    }
    if (ans) {
      if (ans.ok) return;
      throw new MountError(`${op} ${target} failed: ${ans.code}: ${ans.message}`, ans.code, target);
    }
  }
  await spawnMount(op, argv, target);
}

/** The fallback: run `mount`/`umount` and map their messages back to errno names. */
function spawnMount(op: 'mount' | 'umount', argv: string[], target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(op, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (err) => reject(new MountError(`${op} ${target} failed: ${err.message}`, undefined, target)));
    child.on('close', (code) => {
      if (code === 0) return resolve();
      const text = stderr.trim();
      const errCode = /not mounted|not a mount/i.test(text)
        ? 'EINVAL'
        : /busy/i.test(text)
          ? 'EBUSY'
          : /no such file|does not exist/i.test(text)
            ? 'ENOENT'
            : /permission|must be superuser|only root/i.test(text)
              ? 'EPERM'
              : /invalid argument|bad option|wrong fs type/i.test(text)
                ? 'EINVAL'
                : undefined;
      reject(new MountError(`${op} ${target} failed: ${text || `exit ${code}`}`, errCode, target));
    });
  });
}

/**
 * Mounts a tmpfs of `sizeMB` megabytes on `dir`, with `noswap` when the kernel knows it
 * (retrying without it, as Nomad does), `nosuid,nodev`, and `noexec` when asked.
 *
 * @throws MountError
 */
export async function mountTmpfs(dir: string, sizeMB: number, opts: { noexec?: boolean } = {}): Promise<void> {
  const flags = MS_NOSUID | MS_NODEV | (opts.noexec ? MS_NOEXEC : 0);
  const flagNames = ['nosuid', 'nodev', ...(opts.noexec ? ['noexec'] : [])];
  const attempt = (data: string) =>
    sysMount(
      'mount',
      { op: 'mount', source: 'tmpfs', target: dir, fstype: 'tmpfs', flags, data },
      ['-t', 'tmpfs', '-o', [...flagNames, data].join(','), 'tmpfs', dir],
      dir,
    );
  try {
    await attempt(`size=${sizeMB}m,noswap`);
  } catch (err) {
    // Kernels before 6.4 reject noswap with EINVAL.
    if (!(err instanceof MountError) || err.code !== 'EINVAL') throw err;
    await attempt(`size=${sizeMB}m`);
  }
}

/**
 * Bind-mounts `src` onto `dst`, always `nosuid,nodev` (and `ro`, `noexec` when asked): nothing
 * a task can reach through a mount berth made may carry privileges in (a setuid file in the
 * shared alloc dir runs as its caller). The kernel ignores these flags on the first MS_BIND
 * call, so a second one (MS_BIND|MS_REMOUNT|flags) sets them; if that fails the bind is undone.
 *
 * @throws MountError
 */
export async function bindMount(src: string, dst: string, opts: { readOnly?: boolean; noexec?: boolean } = {}): Promise<void> {
  await sysMount('mount', { op: 'mount', source: src, target: dst, fstype: null, flags: MS_BIND }, ['--bind', src, dst], dst);
  const flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (opts.readOnly ? MS_RDONLY : 0) | (opts.noexec ? MS_NOEXEC : 0);
  const names = ['remount', 'bind', 'nosuid', 'nodev', ...(opts.readOnly ? ['ro'] : []), ...(opts.noexec ? ['noexec'] : [])];
  try {
    await sysMount('mount', { op: 'mount', source: null, target: dst, fstype: null, flags }, ['-o', names.join(','), dst], dst);
  } catch (err) {
    // Never leave a bind without the flags asked for.
    await unmount(dst, { lazy: true }).catch(() => undefined);
    throw err;
  }
}

/** The per-mount options of the mount at exactly `dir` (e.g. `rw,nosuid,nodev,relatime`), from the mount table. */
export async function mountOptions(dir: string): Promise<string[] | undefined> {
  const base = await resolveReal(dir);
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  let found: string[] | undefined;
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    if (f.length > 5 && (f[4]!.includes('\\') ? unescapeMountPath(f[4]!) : f[4]) === base) found = f[5]!.split(','); // the last (top) one wins
  }
  return found;
}

/**
 * Unmounts `dir` (`umount2`, never following a symlink at `dir`); `lazy` detaches it even while
 * busy (MNT_DETACH, `umount -l`).
 *
 * @throws MountError; `code` is `EINVAL` when `dir` is not a mount point, `EBUSY` when busy.
 */
export function unmount(dir: string, opts: { lazy?: boolean } = {}): Promise<void> {
  const flags = UMOUNT_NOFOLLOW | (opts.lazy ? MNT_DETACH : 0);
  return sysMount('umount', { op: 'umount', target: dir, flags }, opts.lazy ? ['-l', dir] : [dir], dir);
}

/** Decodes the octal escapes (`\040` for a space) of /proc/self/mountinfo. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** One read of the mount table: mount points in mount order, plus a sorted index for lookups. */
interface MountTable {
  /** Mount points, in mount order (duplicates when stacked). */
  list: string[];
  /** Indexes into `list`, sorted by path (then mount order): prefix ranges by binary search. */
  byPath: number[];
}

let tableReads = 0;

/** @internal How many times the mount table was read (specs bound the reads of a destroy). */
export function mountTableReads(): number {
  return tableReads;
}

async function readMountTable(): Promise<MountTable> {
  tableReads++;
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return { list: [], byPath: [] };
  }
  const list: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ', 5);
    if (f.length > 4) list.push(f[4].includes('\\') ? unescapeMountPath(f[4]) : f[4]);
  }
  const byPath = list.map((_, i) => i).sort((a, b) => (list[a] < list[b] ? -1 : list[a] > list[b] ? 1 : a - b));
  return { list, byPath };
}

// Single-flight reads of the mount table. A caller gets a read that *started after its call*
// (so it sees every mount change that completed before it asked): the one in flight is joined
// only by callers that arrived before it started, so later callers share the next one. With
// thousands of alloc dirs built or destroyed at once, thousands of lookups share a few reads
// instead of each reading and parsing a table that lists every one of those mounts (O(n^2)).
let inFlight: Promise<MountTable> | undefined;
let queued: Promise<MountTable> | undefined;

function mountTable(): Promise<MountTable> {
  if (!inFlight) {
    const p = readMountTable();
    inFlight = p;
    const clear = () => {
      if (inFlight === p) inFlight = undefined;
    };
    p.then(clear, clear);
    return p;
  }
  queued ??= inFlight
    .then(
      () => undefined,
      () => undefined,
    )
    .then(() => {
      queued = undefined;
      return mountTable();
    });
  return queued;
}

/** Every mount point in /proc/self/mountinfo, in mount order. Empty where it cannot be read. */
export async function listMountPoints(): Promise<string[]> {
  return [...(await mountTable()).list];
}

/** First position in `t.byPath` whose path is >= `key`. */
function lowerBound(t: MountTable, key: string): number {
  let lo = 0;
  let hi = t.byPath.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t.list[t.byPath[mid]!]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Indexes of the mounts at `base` or under it (prefix `base/`). */
function indexesUnder(t: MountTable, base: string): number[] {
  const out: number[] = [];
  const prefix = base === '/' ? '/' : base + '/';
  for (const key of base === '/' ? ['/'] : [base, prefix]) {
    for (let i = lowerBound(t, key); i < t.byPath.length; i++) {
      const m = t.list[t.byPath[i]!]!;
      if (key === base && base !== '/' ? m !== base : !m.startsWith(prefix)) break;
      out.push(t.byPath[i]!);
    }
  }
  return out;
}

/** The real path of `p` when it exists, else its absolute form. */
async function resolveReal(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Mount points at or under `dir`, deepest (and most recently stacked) first: the order to
 * unmount them in.
 */
export async function mountsUnder(dir: string): Promise<string[]> {
  const base = await resolveReal(dir);
  const t = await mountTable();
  const hits = indexesUnder(t, base).map((i) => ({ m: t.list[i]!, i }));
  hits.sort((a, b) => b.m.split('/').length - a.m.split('/').length || b.i - a.i);
  return hits.map(({ m }) => m);
}

/** True when `dir` is a mount point (something is mounted exactly there). */
export async function isMountPoint(dir: string): Promise<boolean> {
  const base = await resolveReal(dir);
  const t = await mountTable();
  const i = lowerBound(t, base);
  return i < t.byPath.length && t.list[t.byPath[i]!] === base;
}
