/**
 * The alloc-dir boundary as the runtime sees it: what runners, effect actors, watchers and the
 * snapshot server call on an allocation's directory. {@link AllocDir} is the real one; a client
 * built with another {@link AllocDirFactory} (the simulator's in-memory dirs) runs the same code.
 * @module
 */
import type { Task } from '../../model/types.ts';
import type { ChrootStats } from './chroot.ts';

/** Options of a task dir's `build`. */
export interface TaskDirBuildOptions {
  /** Chroot mode when given, even `{}`: host source → path inside the task dir. */
  chroot?: Record<string, string>;
  /** Cancels a long chroot build. */
  signal?: AbortSignal;
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
  build(): Promise<void>;
  destroy(): Promise<void>;
  newTaskDir(taskName: string, opts?: { secretsMB?: number }): TaskDirHandle;
  taskDir(taskName: string): TaskDirHandle | undefined;
  /** Moves sticky data out of `previous` (same kind of handle) into this dir. */
  move(previous: AllocDirHandle, tasks: Task[]): Promise<void>;
  snapshot(out: NodeJS.WritableStream): Promise<void>;
}

/** Makes the directory handle of `allocId` under the client's alloc dir. */
export type AllocDirFactory = (clientAllocDir: string, allocId: string) => AllocDirHandle;
