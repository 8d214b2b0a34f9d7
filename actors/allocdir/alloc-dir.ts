/**
 * An allocation's directory, after Nomad's `allocdir.AllocDir`.
 *
 * ```
 * <clientAllocDir>/<allocId>/    0755 (umask applies)
 *   alloc/                       0777, nobody when root: shared by the group's tasks
 *     data/ logs/ tmp/           0777
 *   <task>/ ...                  see TaskDir
 * ```
 *
 * Every method is safe to call while another is in flight. An in-process read/write lock
 * orders them: task builds, snapshots and restores share it; build, destroy and move take it
 * alone. `build` is memoised, and `destroy` waits for in-flight work before unmounting.
 * @module
 */
import { lstat, mkdir, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { AllocDirNotBuiltError, BerthError, InvalidTaskNameError, MultiError } from '../../model/errors.ts';
import { pathComponentProblem, taskNameProblem } from '../../model/parse.ts';
import type { Task } from '../../model/types.ts';
import { AllocDirMoveError } from './errors.ts';
import type { AllocDirHandle } from './handle.ts';
import { exists, isNotFound } from './escape.ts';
import { RwLock } from './lock.ts';
import { mountsUnder } from './mounts.ts';
import { allocMkdirAll } from './perms.ts';
import { writeSnapshot } from './snapshot.ts';
import { LOG_DIR_NAME, SHARED_ALLOC_NAME, TASK_LOCAL, TMP_DIR_NAME, TaskDir, unmountAll } from './task-dir.ts';
import { errorText } from '../../model/error-text.ts';

/** The shared dir's data subdirectory (migrated with sticky/migrate ephemeral disks). */
export const SHARED_DATA_DIR = 'data';
/** Subdirectories of the shared alloc dir, in Nomad's order. */
export const SHARED_ALLOC_DIRS = [LOG_DIR_NAME, TMP_DIR_NAME, SHARED_DATA_DIR] as const;

/** Options of the {@link AllocDir} constructor. */
export interface AllocDirOptions {
  /** Nomad's `client.mounts_dir`: also never embedded in a chroot. */
  clientMountsDir?: string;
}

/**
 * An allocation's directory.
 *
 * @example
 * const ad = new AllocDir('/var/lib/berth/alloc', alloc.id);
 * await ad.build();
 * const web = ad.newTaskDir('web');
 * await web.build({ chroot: defaultChrootEnv });
 * // ...
 * await ad.destroy();
 */
export class AllocDir implements AllocDirHandle {
  /** The client's alloc dir (parent of every alloc dir); never embedded in a chroot. */
  readonly clientAllocDir: string;
  /** The allocation id (this dir's base name). */
  readonly allocId: string;
  /** `<clientAllocDir>/<allocId>` */
  readonly dir: string;
  /** `<dir>/alloc`, holding data/, logs/, tmp/ */
  readonly sharedDir: string;
  /** `<dir>/alloc/logs` */
  readonly logsDir: string;
  /** `<dir>/alloc/data` */
  readonly dataDir: string;
  /** `<dir>/alloc/tmp` */
  readonly tmpDir: string;
  /** Host paths never embedded in a task's chroot: the client alloc dir (and mounts dir). */
  readonly chrootSkip: readonly string[];
  /** @internal see the module doc. */
  readonly lock = new RwLock();

  #built = false;
  #building?: Promise<void>;
  #tasks = new Map<string, TaskDir>();

  constructor(clientAllocDir: string, allocId: string, opts: AllocDirOptions = {}) {
    const problem = pathComponentProblem(allocId);
    if (problem) throw new BerthError(`invalid alloc id ${JSON.stringify(allocId)}: ${problem}`);
    this.clientAllocDir = path.resolve(clientAllocDir);
    this.allocId = allocId;
    this.dir = path.join(this.clientAllocDir, allocId);
    this.sharedDir = path.join(this.dir, SHARED_ALLOC_NAME);
    this.logsDir = path.join(this.sharedDir, LOG_DIR_NAME);
    this.dataDir = path.join(this.sharedDir, SHARED_DATA_DIR);
    this.tmpDir = path.join(this.sharedDir, TMP_DIR_NAME);
    this.chrootSkip = Object.freeze(opts.clientMountsDir ? [this.clientAllocDir, path.resolve(opts.clientMountsDir)] : [this.clientAllocDir]);
  }

  /** True between a successful `build` and `destroy`. */
  get built(): boolean {
    return this.#built;
  }

  /**
   * Registers (and returns) the TaskDir of `taskName`; no disk I/O. A later call with the same
   * name replaces the earlier one, as in Nomad.
   *
   * @throws InvalidTaskNameError for '', '.', '..', names with '/', '\\' or NUL, `alloc`, and
   *   names over `MAX_TASK_NAME_BYTES` bytes (see `taskNameProblem`).
   */
  newTaskDir(taskName: string, opts: { secretsMB?: number } = {}): TaskDir {
    const problem = taskNameProblem(taskName);
    if (problem) throw new InvalidTaskNameError(taskName, problem);
    const td = new TaskDir(this, taskName, opts);
    this.#tasks.set(taskName, td);
    return td;
  }

  /** The registered TaskDir of `taskName`, if any. */
  taskDir(taskName: string): TaskDir | undefined {
    return this.#tasks.get(taskName);
  }

  /** Every registered TaskDir, in registration order. */
  tasks(): TaskDir[] {
    return [...this.#tasks.values()];
  }

  /** Rejects with the stat error when the alloc dir cannot be reached (Nomad's Restore check). */
  async accessible(): Promise<void> {
    await stat(this.dir);
  }

  /**
   * Creates the alloc dir and the shared `alloc/{logs,tmp,data}` (Nomad's `AllocDir.Build`).
   * Idempotent; concurrent calls share one build. Does not create task dirs.
   */
  build(): Promise<void> {
    this.#building ??= this.lock.exclusive(() => this.#build());
    const p = this.#building;
    p.catch(() => {
      if (this.#building === p) this.#building = undefined; // let a later call retry
    });
    return p;
  }

  async #build(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o755 });
    } catch (err) {
      throw new BerthError(`Failed to make the alloc directory ${this.dir}: ${errorText(err)}`, { cause: err });
    }
    await allocMkdirAll(this.sharedDir, 0o777);
    for (const d of SHARED_ALLOC_DIRS) await allocMkdirAll(path.join(this.sharedDir, d), 0o777);
    this.#built = true;
  }

  /**
   * Unmounts everything under the alloc dir (each task's alloc/logs, alloc, secrets, private,
   * dev, proc, then anything else /proc/self/mountinfo still lists, lazily when busy), then
   * removes the whole tree. Waits for in-flight builds, moves and snapshots. Idempotent and
   * best effort: every step is tried, then one {@link MultiError} lists all failures. Never
   * removes anything while a mount remains under the dir, and never follows a symlink out.
   */
  destroy(): Promise<void> {
    this.#building = undefined; // a build() called after this one must build again
    return this.lock.exclusive(async () => {
      const errors: Error[] = [];
      // Every task's mounts (alloc/logs, alloc, secrets, private, dev, proc), tasks not registered
      // in this process (restore) and anything else, in one pass: one read of the mount table,
      // deepest (and most recently stacked) first, then one read to check. Unmounting task by
      // task read the whole table, which lists every task's mounts, several times per task: a
      // destroy then grew with the square of the task count.
      for (const td of this.#tasks.values()) td.forgetBuilt();
      const leftovers = [...new Set(await mountsUnder(this.dir))];
      // Mounts of one depth are never inside one another: each depth's unmounts are in flight
      // together (a bounded batch), deeper depths first.
      for (let i = 0; i < leftovers.length;) {
        const depth = leftovers[i]!.split('/').length;
        let j = i;
        while (j < leftovers.length && leftovers[j]!.split('/').length === depth && j - i < UNMOUNT_BATCH) j++;
        const settled = await Promise.allSettled(leftovers.slice(i, j).map((m) => unmountAll(m)));
        for (const s of settled) if (s.status === 'rejected') errors.push(s.reason as Error);
        i = j;
      }
      // Read the table again only when something was unmounted since the read above.
      const left = leftovers.length ? await mountsUnder(this.dir) : leftovers;
      if (left.length) {
        errors.push(new BerthError(`failed to remove alloc dir ${JSON.stringify(this.dir)}: still mounted: ${left.join(', ')}`));
      } else {
        try {
          await rm(this.dir, { recursive: true, force: true });
        } catch (err) {
          // Keep going past the entry that failed (busy, permission...), then report.
          const rest: Error[] = [];
          await removeTree(this.dir, rest);
          errors.push(new BerthError(`failed to remove alloc dir ${JSON.stringify(this.dir)}: ${errorText(err)}`), ...rest);
        }
      }
      this.#built = false;
      if (errors.length) throw new MultiError(`failed to destroy alloc dir ${JSON.stringify(this.dir)}`, errors);
    });
  }

  /**
   * Moves `previous`'s `alloc/data` and, for each of `tasks`, `<task>/local` into this dir by
   * rename (never logs, tmp or secrets), replacing the empty destination dirs. Missing sources
   * are skipped. Both dirs are locked for the duration, so a snapshot of `previous` finishes
   * first.
   *
   * @throws AllocDirNotBuiltError when this dir is not built.
   */
  async move(previous: AllocDir, tasks: Task[]): Promise<void> {
    if (!this.built) throw new AllocDirNotBuiltError(this.dir);
    for (const t of tasks) {
      const problem = taskNameProblem(t.name);
      if (problem) throw new InvalidTaskNameError(t.name, problem);
    }
    const run = () => this.#move(previous, tasks);
    if (previous === this) return this.lock.exclusive(run);
    // A fixed order over both locks, so two opposite moves cannot deadlock.
    const [a, b] = this.dir < previous.dir ? [this, previous] : [previous, this];
    return a.lock.exclusive(() => b.lock.exclusive(run));
  }

  async #move(previous: AllocDir, tasks: Task[]): Promise<void> {
    if (!this.built) throw new AllocDirNotBuiltError(this.dir); // destroyed while we waited
    if (await exists(previous.dataDir)) {
      await rmdir(this.dataDir).catch(() => undefined); // only succeeds when empty
      try {
        await rename(previous.dataDir, this.dataDir);
      } catch (err) {
        throw new AllocDirMoveError(`error moving data dir: ${errorText(err)}`, { cause: err });
      }
    }
    for (const t of tasks) {
      const src = path.join(previous.dir, t.name, TASK_LOCAL);
      if (!(await exists(src))) continue;
      const taskDir = path.join(this.dir, t.name);
      try {
        await mkdir(taskDir, { recursive: true, mode: 0o777 });
      } catch (err) {
        throw new AllocDirMoveError(`error creating task ${JSON.stringify(t.name)} dir: ${errorText(err)}`, { cause: err });
      }
      const dest = path.join(taskDir, TASK_LOCAL);
      await rmdir(dest).catch(() => undefined);
      try {
        await rename(src, dest);
      } catch (err) {
        throw new AllocDirMoveError(`error moving task ${JSON.stringify(t.name)} local dir: ${errorText(err)}`, { cause: err });
      }
    }
  }

  /**
   * Writes a tar of `alloc/data` and each registered task's `local/` to `out`, names relative to
   * this dir, then ends `out`. On error it appends `NOMAD-<allocId>-ERROR.log`, ends `out`, then
   * rejects. Runs alongside task builds and other snapshots; a move or destroy waits for it.
   */
  snapshot(out: NodeJS.WritableStream): Promise<void> {
    return this.lock.shared(() => writeSnapshot(this, out));
  }
}

/** Unmounts a destroy has in flight at once. */
const UNMOUNT_BATCH = 32;

/** Best-effort rm -r that keeps going past failures (collected) and never follows links. */
async function removeTree(p: string, errors: Error[]): Promise<void> {
  let st;
  try {
    st = await lstat(p);
  } catch (err) {
    if (!isNotFound(err)) errors.push(err as Error);
    return;
  }
  try {
    if (!st.isDirectory()) return await unlink(p);
    for (const name of await readdir(p)) await removeTree(path.join(p, name), errors);
    await rmdir(p);
  } catch (err) {
    if (!isNotFound(err)) errors.push(err as Error);
  }
}
