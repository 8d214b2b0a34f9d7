/**
 * A task's directory inside an alloc dir, after Nomad's `allocdir.TaskDir`.
 *
 * ```
 * <alloc>/<task>/        0777 (nobody when root)
 *   local/               0777
 *   tmp/                 01777
 *   secrets/  private/   0777; 1 MB noexec tmpfs with a `.nomad-mount` marker when root
 *   alloc/               chroot mode only: bind mount of <alloc>/alloc; alloc/logs re-bound read-only
 *   <chroot_env>         chroot mode only: host paths embedded (see chroot.ts)
 * ```
 * @module
 */
import type { TaskDirBuildOptions, TaskDirHandle } from './handle.ts';
import { chmod, lstat, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BerthError, MultiError } from '../../model/errors.ts';
import { embed, type ChrootCache, type ChrootStats } from './chroot.ts';
import { TaskDirBuildError, MountError } from './errors.ts';
import { exists } from './escape.ts';
import { Mutex, type RwLock } from './lock.ts';
import { bindMount, isMountPoint, mountTmpfs, mountsUnder, unmount } from './mounts.ts';
import { allocMkdirAll, dropDirPermissions, isRoot } from './perms.ts';
import { errorText } from '../../model/error-text.ts';

/** `<task>/local` (Nomad's `TaskLocal`). */
export const TASK_LOCAL = 'local';
/** `<task>/secrets` (Nomad's `TaskSecrets`). */
export const TASK_SECRETS = 'secrets';
/** `<task>/private` (Nomad's `TaskPrivate`). */
export const TASK_PRIVATE = 'private';
/** `tmp`, in the task dir and in the shared alloc dir (Nomad's `TmpDirName`). */
export const TMP_DIR_NAME = 'tmp';
/** `<alloc>/alloc`, and its bind mount at `<task>/alloc` (Nomad's `SharedAllocName`). */
export const SHARED_ALLOC_NAME = 'alloc';
/** `<alloc>/alloc/logs` (Nomad's `LogDirName`). */
export const LOG_DIR_NAME = 'logs';
/** Marker created on a secret tmpfs; it vanishes with the mount, which tells us to remount. */
export const SECRET_MOUNT_MARKER = '.nomad-mount';
/** Default size of the secrets tmpfs; the private tmpfs is always this size. */
export const DEFAULT_SECRETS_MB = 1;

/** What a TaskDir needs from its AllocDir (kept minimal to avoid an import cycle). */
export interface TaskDirOwner {
  readonly dir: string;
  readonly sharedDir: string;
  readonly built: boolean;
  /** Host paths never embedded in a chroot. */
  readonly chrootSkip: readonly string[];
  /** @internal shared by task builds, exclusive for alloc build/destroy/move. */
  readonly lock: RwLock;
}

/** Options of {@link TaskDir.build}. */
export type { TaskDirBuildOptions } from './handle.ts';

/**
 * A task's directory. Create it with `AllocDir.newTaskDir`; `build` is safe to call repeatedly
 * and concurrently (calls run one after the other; a rebuild only adds what is missing).
 */
export class TaskDir implements TaskDirHandle {
  /** The task's name (a single path component). */
  readonly name: string;
  /** The alloc dir path, `<clientAllocDir>/<allocId>`. */
  readonly allocDir: string;
  /** `<alloc>/<task>` */
  readonly dir: string;
  /** `<task>/local`: migrated with sticky/migrate ephemeral disks. */
  readonly localDir: string;
  /** `<task>/secrets`: a noexec tmpfs when root. */
  readonly secretsDir: string;
  /** `<task>/private`: a noexec tmpfs when root. */
  readonly privateDir: string;
  /** `<task>/tmp`: sticky, 01777. */
  readonly tmpDir: string;
  /** `<task>/alloc`: where the shared alloc dir is bind-mounted in chroot mode. */
  readonly sharedTaskDir: string;
  /** `<alloc>/alloc`: the shared alloc dir itself. */
  readonly sharedAllocDir: string;
  /** `<alloc>/alloc/logs`: where the task's logs go. */
  readonly logDir: string;
  /** Size of the secrets tmpfs in MB. */
  readonly secretsMB: number;

  #owner: TaskDirOwner;
  #built = false;
  #mutex = new Mutex();
  #lastChrootStats?: ChrootStats;
  #chrootCache: ChrootCache = {};

  /** @internal use `AllocDir.newTaskDir`. */
  constructor(owner: TaskDirOwner, name: string, opts: { secretsMB?: number } = {}) {
    this.#owner = owner;
    this.name = name;
    this.allocDir = owner.dir;
    this.dir = path.join(owner.dir, name);
    this.localDir = path.join(this.dir, TASK_LOCAL);
    this.secretsDir = path.join(this.dir, TASK_SECRETS);
    this.privateDir = path.join(this.dir, TASK_PRIVATE);
    this.tmpDir = path.join(this.dir, TMP_DIR_NAME);
    this.sharedTaskDir = path.join(this.dir, SHARED_ALLOC_NAME);
    this.sharedAllocDir = owner.sharedDir;
    this.logDir = path.join(owner.sharedDir, LOG_DIR_NAME);
    this.secretsMB = opts.secretsMB && opts.secretsMB > 0 ? opts.secretsMB : DEFAULT_SECRETS_MB;
  }

  /** True after a successful build, until the alloc dir is destroyed. */
  get built(): boolean {
    return this.#built && this.#owner.built;
  }

  /** What the last chroot build did (undefined before one ran). */
  get lastChrootStats(): ChrootStats | undefined {
    return this.#lastChrootStats;
  }

  /**
   * Creates the task's directories (Nomad's `TaskDir.Build`). `chroot` given (even `{}`) means
   * chroot mode: the shared alloc dir is bind-mounted at `<task>/alloc` (logs read-only) and the
   * map is embedded. Rejects with {@link TaskDirBuildError} when the alloc dir is not built.
   */
  build(opts: TaskDirBuildOptions = {}): Promise<void> {
    return this.#mutex.run(() => this.#owner.lock.shared(() => this.#build(opts)));
  }

  async #build(opts: TaskDirBuildOptions): Promise<void> {
    if (!this.#owner.built) {
      throw new TaskDirBuildError(`unable to build task dir ${JSON.stringify(this.dir)} - alloc dir is not built`);
    }
    await allocMkdirAll(this.dir, 0o777);
    await allocMkdirAll(this.localDir, 0o777);
    await allocMkdirAll(this.tmpDir, 0o1777);
    const chroot = opts.chroot !== undefined;
    if (chroot) await this.#mountSharedAlloc();
    await this.#secretDir(this.secretsDir, this.secretsMB);
    await this.#secretDir(this.privateDir, DEFAULT_SECRETS_MB);
    if (chroot) {
      this.#lastChrootStats = await embed(this.dir, opts.chroot!, {
        skip: [...this.#owner.chrootSkip],
        signal: opts.signal,
        cache: this.#chrootCache,
        ...(opts.onChrootProgress ? { onProgress: opts.onChrootProgress } : {}),
      });
    }
    this.#built = true;
  }

  /** Bind-mounts `<alloc>/alloc` on `<task>/alloc` and `alloc/logs` read-only over it. */
  async #mountSharedAlloc(): Promise<void> {
    await mkdir(this.sharedTaskDir, { recursive: true, mode: 0o777 });
    await refuseSymlink(this.sharedTaskDir);
    if (!isRoot()) return; // non-root: a plain directory, no mounts
    const mounted = new Set(await mountsUnder(this.dir));
    const real = await realDir(this.sharedTaskDir);
    const logs = path.join(this.sharedTaskDir, LOG_DIR_NAME);
    try {
      if (!mounted.has(real)) {
        await bindMount(this.sharedAllocDir, this.sharedTaskDir);
        await bindMount(this.logDir, logs, { readOnly: true });
      } else if (!mounted.has(path.join(real, LOG_DIR_NAME))) {
        await bindMount(this.logDir, logs, { readOnly: true });
      }
    } catch (err) {
      throw new TaskDirBuildError(`Failed to mount shared directory for task: ${errorText(err)}`, { cause: err });
    }
  }

  /** Nomad's `createSecretDir`: a noexec tmpfs with a marker (remounted when the mount is lost). */
  async #secretDir(dir: string, sizeMB: number): Promise<void> {
    // mkdir -p reports the first directory it created: a directory made just now cannot be a
    // mount point, so only an existing one needs the (shared, but large) mount-table lookup.
    const made = await mkdir(dir, { recursive: true, mode: 0o777 });
    if (isRoot()) {
      await refuseSymlink(dir); // mount(2) would follow it
      const marker = path.join(dir, SECRET_MOUNT_MARKER);
      const mounted = made === undefined && (await isMountPoint(await realDir(dir)));
      if (!mounted) await mountTmpfs(dir, sizeMB, { noexec: true });
      if (!mounted || !(await exists(marker))) {
        await writeFile(marker, '', { mode: 0o666 });
        await chmod(marker, 0o666);
      }
    }
    await dropDirPermissions(dir, 0o777);
  }

  /**
   * Nomad's `TaskDir.Unmount`: unmounts `alloc/logs` and `alloc` then removes `<task>/alloc`,
   * unmounts and removes `secrets` and `private`, then `dev` and `proc` if a driver made them.
   * Tries every step; rejects with one {@link MultiError}. Nothing is removed while a mount is
   * still under it (removing through the alloc bind mount would delete shared data).
   */
  async unmount(): Promise<void> {
    const errors = await this.unmountCollect();
    if (errors.length) throw new MultiError(`failed to unmount task dir ${JSON.stringify(this.dir)}`, errors);
  }

  /** @internal Its alloc dir unmounts and removes it (`AllocDir.destroy`): build again next time. */
  forgetBuilt(): void {
    this.#built = false;
  }

  /** @internal like {@link unmount} but returns the errors. */
  async unmountCollect(): Promise<Error[]> {
    const errors: Error[] = [];
    const step = async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err instanceof Error ? err : new BerthError(String(err)));
      }
    };
    // Every check is inside a step: one path the filesystem refuses (ENAMETOOLONG, ...) must not
    // stop the others, nor the alloc dir's own clean-up after this.
    await step(async () => {
      if (!(await exists(this.sharedTaskDir))) return;
      await unmountAll(path.join(this.sharedTaskDir, LOG_DIR_NAME));
      await unmountAll(this.sharedTaskDir);
      await removeIfUnmounted(this.sharedTaskDir);
    });
    for (const d of [this.secretsDir, this.privateDir, path.join(this.dir, 'dev'), path.join(this.dir, 'proc')]) {
      await step(async () => {
        if (!(await exists(d))) return;
        await unmountAll(d);
        await removeIfUnmounted(d);
      });
    }
    this.#built = false;
    return errors;
  }
}

/** Unmounts `dir` until nothing is mounted there (stacked mounts), lazily when busy. */
export async function unmountAll(dir: string): Promise<void> {
  if (!isRoot()) return;
  for (let i = 0; i < 16; i++) {
    try {
      await unmount(dir);
    } catch (err) {
      const code = err instanceof MountError ? err.code : undefined;
      if (code === 'EINVAL' || code === 'ENOENT') return; // not (or no longer) a mount point
      if (code !== 'EBUSY') throw err;
      await unmount(dir, { lazy: true });
    }
  }
}

/** rm -r `dir`, but only when nothing is mounted at or under it. */
async function removeIfUnmounted(dir: string): Promise<void> {
  const left = await mountsUnder(dir);
  if (left.length) throw new BerthError(`refusing to remove ${JSON.stringify(dir)}: still mounted: ${left.join(', ')}`);
  await rm(dir, { recursive: true, force: true });
}

async function refuseSymlink(p: string): Promise<void> {
  if ((await lstat(p)).isSymbolicLink()) throw new TaskDirBuildError(`refusing to use ${JSON.stringify(p)}: it is a symlink`);
}

function realDir(p: string): Promise<string> {
  return realpath(p);
}
