/**
 * The alloc-dir boundary as the runtime sees it: what runners, effect actors, watchers and the
 * snapshot server call on an allocation's directory. {@link AllocDir} is the real one; a client
 * built with another {@link AllocDirFactory} (the simulator's in-memory dirs) runs the same code.
 * @module
 */
import type { Task } from '../../model/types.ts';
import type { ChrootProgress, ChrootStats } from './chroot.ts';

/** Options of a task dir's `build`. */
export interface TaskDirBuildOptions {
  /** Chroot mode when given, even `{}`: host source → path inside the task dir. */
  chroot?: Record<string, string>;
  /** Cancels a long chroot build. */
  signal?: AbortSignal;
  /** A chroot build's progress, about every 200 ms (see `EmbedOptions.onProgress`). */
  onChrootProgress?: (progress: ChrootProgress) => void;
}

/** One task's directory, as the runtime uses it. */
export interface TaskDirHandle {
  readonly name: string;
  readonly dir: string;
  readonly localDir: string;
  readonly secretsDir: string;
  readonly privateDir: string;
  readonly tmpDir: string;
  /** What the last chroot build did (undefined before one ran). */
  readonly lastChrootStats?: ChrootStats | undefined;
  /** Makes the task's dirs (and, with `chroot`, its chroot); safe to call again. */
  build(opts?: TaskDirBuildOptions): Promise<void>;
}

/** One allocation's directory, as the runtime uses it. */
export interface AllocDirHandle {
  readonly allocId: string;
  readonly dir: string;
  readonly sharedDir: string;
  readonly logsDir: string;
  readonly dataDir: string;
  readonly built: boolean;
  /** Makes the alloc dir (shared `alloc/` with `data`, `logs`, `tmp`); safe to call again. */
  build(): Promise<void>;
  /** Rejects when the dir cannot be reached (gone, unreadable): a restore must not rebuild it. */
  accessible(): Promise<void>;
  /** Unmounts what the task dirs mounted, then removes the whole dir. */
  destroy(): Promise<void>;
  /** The handle of a task's dir (made, not yet built); `secretsMB` sizes its `secrets/` tmpfs. */
  newTaskDir(taskName: string, opts?: { secretsMB?: number }): TaskDirHandle;
  /** A task dir made before, if any. */
  taskDir(taskName: string): TaskDirHandle | undefined;
  /** Moves sticky data out of `previous` (same kind of handle) into this dir. */
  move(previous: AllocDirHandle, tasks: Task[]): Promise<void>;
  /** Writes the migratable data (`alloc/data`, each task's `local/`) to `out` as a tar stream. */
  snapshot(out: NodeJS.WritableStream): Promise<void>;
}

/** Makes the directory handle of `allocId` under the client's alloc dir. */
export type AllocDirFactory = (clientAllocDir: string, allocId: string) => AllocDirHandle;
