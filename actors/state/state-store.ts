/**
 * The client's state store: berth's own records (each alloc's client view, each running task's
 * driver handle) in SQLite, so a later client can see what was running and reattach to tasks.
 * Never xstate's persisted snapshots (fragile across versions; they re-run promises).
 *
 * Writes are coalesced: puts made in one tick land in one transaction on the next, and a newer
 * put for the same key replaces an older one that has not been written yet. Intent that must be
 * durable before berth acts on it (a task's handle before its start, a destroy request before
 * the first kill) is written at once: {@link StateStore.flush} after the put, or
 * {@link StateStore.markDestroying}.
 *
 * Handles are serialised when they are put; alloc views (immutable: a new object per change, and
 * large: every task's state) when they are written, only the latest of each. A value JSON cannot
 * hold (a BigInt, a cycle) is refused with a {@link StateStoreError} to `onError`, and a failed
 * write is reported the same way. Neither ever throws out of the deferred write, where it would
 * crash the host.
 * @module
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { TaskHandle } from '../drivers/driver.ts';
import type { Allocation, TaskState } from '../../model/types.ts';
import { BerthError } from '../../model/errors.ts';
import { errorText } from '../../model/error-text.ts';

/**
 * The store could not be opened, read or written, or a record could not be serialised. `file`
 * names the database when the file itself is at fault (damaged, unreadable, missing tables).
 */
export class StateStoreError extends BerthError {
  constructor(message: string, options?: { cause?: unknown; file?: string }) {
    super(message, options);
    if (options?.file !== undefined) this.file = options.file;
  }
  /** The database file at fault, when it is the file. */
  readonly file?: string;
}

/** What to do about a damaged store, said the same way by every error that meets one. */
export const REPAIR_ADVICE =
  'start the client with `repairStateStore: true` (or move the file and its -wal and -shm aside by hand): a fresh store is made, live tasks a usable handle accounts for are reattached, the others are stopped and reported';

/** The error for a store file that cannot be used, naming the file and what to do. */
export function damagedStoreError(path: string, err: unknown, doing: string): StateStoreError {
  return new StateStoreError(`state store ${path} is damaged or unreadable (${doing}: ${errorText(err)}); ${REPAIR_ADVICE}`, {
    cause: err,
    file: path,
  });
}

/**
 * Moves a damaged store (and its `-wal` and `-shm`) aside to `<name>.damaged-<time>` beside it,
 * so a fresh one can be made; returns the new name of the main file.
 */
export function quarantineStateStore(path: string, now = Date.now()): string {
  const aside = join(dirname(path), `${basename(path)}.damaged-${now}`);
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
  }
  return aside;
}

/** Options of {@link openStateStore}. */
export interface StateStoreOptions {
  /** Told about records that cannot be stored (default: ignored; the client puts them on its bus). */
  onError?: (err: StateStoreError) => void;
  /**
   * Runs the coalesced write later; returns a cancel. Default `setImmediate`. The simulator
   * defers on its virtual clock, so a simulated crash loses exactly the unwritten puts.
   */
  defer?: (fn: () => void) => () => void;
  /** An open database to use instead of opening `path` (the simulator's shared in-memory disk). */
  db?: Database.Database;
  /**
   * Open an existing store for reading only (what `berth status` does beside a live client):
   * nothing is created, and every write method throws.
   */
  readonly?: boolean;
  /**
   * A store that cannot be opened (not a database, torn, a table missing or malformed) is moved
   * aside ({@link quarantineStateStore}) and a fresh one made, instead of throwing. `onRepair`
   * is told where the damaged file went.
   */
  repair?: boolean;
  /** Told when `repair` moved a damaged file aside. */
  onRepair?: (movedTo: string, err: StateStoreError) => void;
}

const deferImmediate = (fn: () => void) => {
  const h = setImmediate(fn);
  return () => clearImmediate(h);
};

/** JSON text of a record, or a StateStoreError saying why there is none. */
function serialise(what: string, v: unknown): string | StateStoreError {
  try {
    const text = JSON.stringify(v);
    if (typeof text !== 'string') return new StateStoreError(`cannot store ${what}: not a JSON value`);
    return text;
  } catch (err) {
    return new StateStoreError(`cannot store ${what}: ${errorText(err)}`, { cause: err });
  }
}

/** What the store holds for one alloc. */
export interface StoredAlloc {
  alloc: Allocation;
  handles: Record<string, TaskHandle>;
  /** `destroy()` was called: a restore finishes the destroy instead of running the alloc. */
  destroying?: boolean;
}

/** The client's persistent records. */
export interface StateStore {
  /** Saves the client's view of an allocation (coalesced: written on the next tick; not to be mutated after). */
  putAlloc(alloc: Allocation): void;
  /** Forgets an allocation and its handles. */
  deleteAlloc(allocId: string): void;
  /** Records, durably before it returns, that the alloc is being destroyed. */
  markDestroying(allocId: string): void;
  /** Saves a running task's driver handle, so a later client can reattach. */
  putHandle(allocId: string, task: string, handle: TaskHandle): void;
  /** Forgets a task's handle (the task is gone). */
  deleteHandle(allocId: string, task: string): void;
  /** Everything stored, after flushing pending writes. */
  load(): StoredAlloc[];
  /** Writes pending puts now. */
  flush(): void;
  /** Flushes and closes the database; idempotent. */
  close(): void;
}

type Op =
  | { kind: 'alloc'; json: string }
  | { kind: 'allocValue'; value: Allocation }
  | { kind: 'delAlloc' }
  | { kind: 'handle'; task: string; json: string }
  | { kind: 'delHandle'; task: string };

/** Opens (creating) the SQLite store at `path`; ':memory:' keeps it in memory. Never throws from a deferred write. */
export function openStateStore(path: string, opts: StateStoreOptions = {}): StateStore {
  const report = (err: StateStoreError) => {
    try {
      opts.onError?.(err);
    } catch {
      /* a reporter that throws must not break the store */
    }
  };
  if (opts.readonly) return openReadonly(path, report);
  if (!opts.db && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: Database.Database;
  try {
    db = openChecked(path, opts.db);
  } catch (err) {
    const typed = damagedStoreError(path, err, 'opening it');
    if (!opts.repair || opts.db || path === ':memory:') throw typed;
    const aside = quarantineStateStore(path);
    opts.onRepair?.(aside, typed);
    try {
      db = openChecked(path, undefined);
    } catch (again) {
      throw damagedStoreError(path, again, 'making a fresh store after moving the damaged one aside');
    }
  }
  const defer = opts.defer ?? deferImmediate;
  const putDestroying = db.prepare('INSERT OR IGNORE INTO destroying (alloc_id) VALUES (?)');
  const delDestroying = db.prepare('DELETE FROM destroying WHERE alloc_id = ?');
  const putAlloc = db.prepare('INSERT INTO allocs (id, alloc) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET alloc = excluded.alloc');
  const delAlloc = db.prepare('DELETE FROM allocs WHERE id = ?');
  const delAllocHandles = db.prepare('DELETE FROM task_handles WHERE alloc_id = ?');
  const putHandle = db.prepare(
    'INSERT INTO task_handles (alloc_id, task, handle) VALUES (?, ?, ?) ON CONFLICT(alloc_id, task) DO UPDATE SET handle = excluded.handle',
  );
  const delHandle = db.prepare('DELETE FROM task_handles WHERE alloc_id = ? AND task = ?');
  const putTaskState = db.prepare(
    'INSERT INTO task_states (alloc_id, task, state) VALUES (?, ?, ?) ON CONFLICT(alloc_id, task) DO UPDATE SET state = excluded.state',
  );
  const delTaskState = db.prepare('DELETE FROM task_states WHERE alloc_id = ? AND task = ?');
  const delAllocTaskStates = db.prepare('DELETE FROM task_states WHERE alloc_id = ?');
  // What was last written of each alloc view, by reference: a change of one task rewrites that
  // task's row only, so an alloc of n tasks costs O(n) to start, not O(n^2).
  const written = new Map<string, { rest: Record<string, unknown>; states: Record<string, TaskState> }>();
  const pendingStates: Array<[string, string, string | undefined]> = [];

  // Pending writes, in order per alloc; allocs: latest only.
  const pendingAllocs = new Map<string, Op>();
  const pendingHandles: Array<[string, Op]> = [];
  let scheduled: (() => void) | undefined;
  let closed = false;

  const write = db.transaction(() => {
    for (const [id, op] of pendingAllocs) {
      if (op.kind === 'alloc') putAlloc.run(id, op.json);
      else if (op.kind === 'delAlloc') {
        delAlloc.run(id);
        delAllocHandles.run(id);
        delAllocTaskStates.run(id);
        delDestroying.run(id);
      }
    }
    for (const [id, task, json] of pendingStates) {
      if (json === undefined) delTaskState.run(id, task);
      else putTaskState.run(id, task, json);
    }
    for (const [id, op] of pendingHandles) {
      if (op.kind === 'handle') putHandle.run(id, op.task, op.json);
      else if (op.kind === 'delHandle') delHandle.run(id, op.task);
    }
  });

  const flush = () => {
    scheduled?.();
    scheduled = undefined;
    if (closed || (pendingAllocs.size === 0 && pendingHandles.length === 0)) return;
    // Alloc views are serialised here, once per write, not on every put: a view holds every
    // task's state, so serialising each put made an alloc of n tasks cost O(n^2) to start.
    for (const [id, op] of pendingAllocs) {
      if (op.kind === 'delAlloc') written.delete(id);
      if (op.kind !== 'allocValue') continue;
      const { taskStates = {}, ...rest } = op.value;
      const last = written.get(id);
      const restChanged = !last || Object.keys(rest).length !== Object.keys(last.rest).length || Object.entries(rest).some(([k, v]) => last.rest[k] !== v);
      if (restChanged) {
        const json = serialise(`allocation ${id}`, rest);
        if (typeof json !== 'string') {
          pendingAllocs.delete(id);
          report(json);
          continue;
        }
        pendingAllocs.set(id, { kind: 'alloc', json });
      } else pendingAllocs.delete(id);
      for (const [task, st] of Object.entries(taskStates)) {
        if (last?.states[task] === st) continue;
        const json = serialise(`the state of task ${JSON.stringify(task)} of allocation ${id}`, st);
        if (typeof json === 'string') pendingStates.push([id, task, json]);
        else report(json);
      }
      for (const task of Object.keys(last?.states ?? {})) if (!(task in taskStates)) pendingStates.push([id, task, undefined]);
      written.set(id, { rest, states: taskStates });
    }
    try {
      write();
    } catch (err) {
      written.clear(); // rewrite everything next time: what is on disk is unknown
      report(new StateStoreError(`failed to write client state: ${errorText(err)}`, { cause: err }));
    }
    pendingAllocs.clear();
    pendingStates.length = 0;
    pendingHandles.length = 0;
  };
  const schedule = () => {
    if (!scheduled && !closed) scheduled = defer(flush);
  };

  return {
    putAlloc(alloc) {
      pendingAllocs.set(alloc.id, { kind: 'allocValue', value: alloc });
      schedule();
    },
    deleteAlloc(allocId) {
      pendingAllocs.set(allocId, { kind: 'delAlloc' });
      for (let i = pendingHandles.length - 1; i >= 0; i--) if (pendingHandles[i]![0] === allocId) pendingHandles.splice(i, 1);
      schedule();
    },
    markDestroying(allocId) {
      if (closed) return;
      flush(); // the alloc's row first, so the mark never lands without it
      try {
        putDestroying.run(allocId);
      } catch (err) {
        report(new StateStoreError(`failed to record the destroy of allocation ${allocId}: ${errorText(err)}`, { cause: err }));
      }
    },
    putHandle(allocId, task, handle) {
      const json = serialise(`the handle of task ${JSON.stringify(task)} of allocation ${allocId}`, handle);
      if (typeof json !== 'string') return report(json);
      pendingHandles.push([allocId, { kind: 'handle', task, json }]);
      schedule();
    },
    deleteHandle(allocId, task) {
      pendingHandles.push([allocId, { kind: 'delHandle', task }]);
      schedule();
    },
    load() {
      flush();
      try {
        return loadAll(db, report);
      } catch (err) {
        throw damagedStoreError(path, err, 'reading it');
      }
    },
    flush,
    close() {
      if (closed) return;
      flush();
      closed = true;
      db.close();
    },
  };
}

/** The tables the store needs, with the columns it reads. */
const SCHEMA = `CREATE TABLE IF NOT EXISTS allocs (id TEXT PRIMARY KEY, alloc TEXT NOT NULL);
           CREATE TABLE IF NOT EXISTS task_handles (alloc_id TEXT NOT NULL, task TEXT NOT NULL, handle TEXT NOT NULL, PRIMARY KEY (alloc_id, task));
           CREATE TABLE IF NOT EXISTS destroying (alloc_id TEXT PRIMARY KEY);
           CREATE TABLE IF NOT EXISTS task_states (alloc_id TEXT NOT NULL, task TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (alloc_id, task));`;

/**
 * Opens the database and proves it usable before anything relies on it: WAL on, the schema
 * there, SQLite's own `quick_check` clean, and every table readable. A store whose
 * `task_handles` was dropped is damaged, not empty: its tasks' handles are gone, and a fresh
 * table would let the restore start them beside their live copies.
 */
function openChecked(path: string, given: Database.Database | undefined): Database.Database {
  const db = given ?? new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    if (tables.has('allocs') && !tables.has('task_handles')) throw new StateStoreError('table task_handles is missing', { file: path });
    if (!tables.has('allocs') && tables.has('task_handles')) throw new StateStoreError('table allocs is missing', { file: path });
    db.exec(SCHEMA);
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new StateStoreError(`quick_check: ${String(check)}`, { file: path });
    db.prepare('SELECT id, alloc FROM allocs LIMIT 1').all();
    db.prepare('SELECT alloc_id, task, handle FROM task_handles LIMIT 1').all();
    db.prepare('SELECT alloc_id FROM destroying LIMIT 1').all();
    db.prepare('SELECT alloc_id, task, state FROM task_states LIMIT 1').all();
    return db;
  } catch (err) {
    if (!given) db.close();
    throw err;
  }
}

/** Why a stored handle is not a handle berth could have written, or undefined when it is one. */
export function handleProblem(h: unknown): string | undefined {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'not an object';
  const o = h as Record<string, unknown>;
  if (typeof o.driver !== 'string' || o.driver === '') return 'no driver';
  if (typeof o.id !== 'string') return 'no id';
  const c = o.config as Record<string, unknown> | undefined;
  if (typeof c !== 'object' || c === null) return 'no config';
  if (typeof c.taskName !== 'string' || typeof c.allocId !== 'string' || typeof c.stateDir !== 'string') return 'config without task, alloc or state dir';
  if (typeof c.task !== 'object' || c.task === null) return 'config without its task';
  if (typeof o.state !== 'object' || o.state === null) return 'no driver state';
  return undefined;
}

/** Every stored alloc with its handles. A row that no longer parses (a torn or edited file) is reported and skipped, never thrown. */
function loadAll(db: Database.Database, report: (err: StateStoreError) => void): StoredAlloc[] {
  const out = new Map<string, StoredAlloc>();
  const parse = (what: string, text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (err) {
      report(new StateStoreError(`cannot read ${what}: ${errorText(err)}`, { cause: err }));
      return undefined;
    }
  };
  for (const row of db.prepare('SELECT id, alloc FROM allocs').all() as Array<{ id: string; alloc: string }>) {
    const alloc = parse(`allocation ${row.id}`, row.alloc);
    if (alloc !== undefined) out.set(row.id, { alloc: alloc as Allocation, handles: {} });
  }
  for (const row of db.prepare('SELECT alloc_id, task, handle FROM task_handles').all() as Array<{ alloc_id: string; task: string; handle: string }>) {
    const stored = out.get(row.alloc_id);
    const what = `the handle of task ${JSON.stringify(row.task)} of allocation ${row.alloc_id}`;
    const handle = stored && parse(what, row.handle);
    if (!stored || handle === undefined) continue;
    // A row that parses but is no handle (`{}`, a wrong shape) is as good as none: the restore's
    // check of the live executors decides what becomes of the task.
    const problem = handleProblem(handle);
    const c = (handle as TaskHandle).config;
    if (problem || c.allocId !== row.alloc_id || c.taskName !== row.task) {
      report(new StateStoreError(`cannot use ${what}: ${problem ?? 'it names another task'}; ignored`));
      continue;
    }
    stored.handles[row.task] = handle as TaskHandle;
  }
  // Task states are rows of their own (older stores keep them inside the alloc row).
  const hasStates = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_states'").get() !== undefined;
  if (hasStates) {
    for (const row of db.prepare('SELECT alloc_id, task, state FROM task_states').all() as Array<{ alloc_id: string; task: string; state: string }>) {
      const stored = out.get(row.alloc_id);
      const st = stored && parse(`the state of task ${JSON.stringify(row.task)} of allocation ${row.alloc_id}`, row.state);
      if (stored && st !== undefined) (stored.alloc.taskStates ??= {})[row.task] = st as TaskState; // a fresh parse: ours to fill
    }
  }
  // A store written before the destroy marker existed has no such table (read-only opens create nothing).
  const hasDestroying = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'destroying'").get() !== undefined;
  if (hasDestroying) {
    for (const row of db.prepare('SELECT alloc_id FROM destroying').all() as Array<{ alloc_id: string }>) {
      const saved = out.get(row.alloc_id);
      if (saved) saved.destroying = true;
    }
  }
  return [...out.values()];
}

/** A read-only view of an existing store; SQLite's WAL lets it read beside a live writer. */
function openReadonly(path: string, report: (err: StateStoreError) => void): StateStore {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const refuse = (): never => {
    throw new BerthError(`state store ${path} is open read-only`);
  };
  return {
    putAlloc: refuse,
    deleteAlloc: refuse,
    markDestroying: refuse,
    putHandle: refuse,
    deleteHandle: refuse,
    load: () => loadAll(db, report),
    flush() {},
    close() {
      if (db.open) db.close();
    },
  };
}
