/**
 * An allocation's runner as hosts see it: the `AllocRunner` interface and the types it speaks
 * (see docs/embedding.md). It lives beside its implementation so that nothing in `actors/`
 * points up into the client for it.
 * @module
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { AllocState } from '../../model/alloc-state.ts';
import type { Allocation } from '../../model/types.ts';
import type { AllocResourceUsage } from '../../model/usage.ts';
import type { AllocFS } from '../allocfs/index.ts';
import type { PrevAllocSource } from '../watchers/index.ts';
import type { LogStream } from '../drivers/logs/reader.ts';
import type { AllocResult, TaskResult } from '../../model/alloc-result.ts';

export type { AllocResult, LogStream, TaskResult };

/** xstate's inspection observer (a function or an observer object). */
export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** One allocation's runner. */
export interface AllocRunner extends PrevAllocSource {
  /** The machine's top-level state. */
  state(): AllocState;
  /** True while waiting for a previous or preempted allocation (in `waiting-prev`, before migrating). */
  isWaiting(): boolean;
  /** True while the previous allocation's data is being moved or streamed in. */
  isMigrating(): boolean;
  /** True once destroyed (the runner is then gone from the client). */
  isDestroyed(): boolean;
  /** A newer server version of the allocation; a terminal desired status stops it. */
  update(alloc: Allocation): void;
  /** From any state; resolves once destroyed, even when destroy hooks failed (errors go on the bus). */
  destroy(): Promise<void>;
  /**
   * Resolves when the machine reaches `state`, or at once if it already passed it. The
   * allocation's state, not its tasks': `running` is entered (prerun hooks) before any task starts.
   */
  waitFor(state: AllocState, signal?: AbortSignal): Promise<void>;
  /**
   * Resolves when the tasks reach `state`: `'running'` once every main and sidecar task has
   * started (at once if they already did, even if they have exited since); `'dead'` once every
   * task is dead. Rejects if the alloc ends first (a task that never started, a destroy, client
   * shutdown), or with `signal`'s reason.
   * @example
   * await runner.waitForTasks('running'); // the service answers from here on
   */
  waitForTasks(state: 'running' | 'dead', signal?: AbortSignal): Promise<void>;
  /** Sends a signal to one task, or to every running task when `task` is omitted. */
  signal(task: string | undefined, signal: string): Promise<void>;
  /** Restarts one running task at once, no restart hook ("Task not running" otherwise). */
  restartTask(task: string, reason?: string): Promise<void>;
  /**
   * Restarts every task, dead ones too, from the first lifecycle stage (after the group's
   * shutdown_delay and the preTaskRestart hooks); a task not running yet is left alone.
   */
  restartAll(reason?: string): Promise<void>;
  /** Restarts the running tasks only, as restartAll waits first (Nomad's RestartRunning). */
  restartRunning(reason?: string): Promise<void>;
  /** A stop update from the host: desired status `stop` at the next `allocModifyIndex`. */
  stop(opts?: { noShutdownDelay?: boolean }): Promise<void>;
  /** Resolves once the alloc is client-terminal (complete, failed, lost) with every task dead. */
  done(): Promise<AllocResult>;
  /** Read access to the alloc dir (`nomad alloc fs`): list, stat, readAt, stream; never secrets/. */
  readonly fs: AllocFS;
  /**
   * Resource usage of the alloc's running tasks and their sum (Nomad's alloc stats). CPU figures
   * are percentages since the previous call (the first: since the task's cgroup was made).
   */
  stats(): Promise<AllocResourceUsage>;
  /** A task's log stream across rotated files. */
  logs(task: string, stream: LogStream, opts?: { follow?: boolean; offset?: number; signal?: AbortSignal }): AsyncIterable<Buffer>;
  /**
   * Runs `argv` inside the running `task` (Nomad's `alloc exec`): for exec tasks in their chroot,
   * namespaces, cgroup and user. Output streams to `onOutput` as it comes (a promise it returns
   * pauses the command's output until it settles); the result keeps
   * bounded copies (1 MiB each). `signal` cancels (the command's process group is killed and the
   * call rejects with the reason); `timeoutMs` bounds it (TimeoutError).
   */
  exec(
    task: string,
    argv: string[],
    opts?: {
      stdin?: AsyncIterable<Buffer> | Buffer;
      signal?: AbortSignal;
      timeoutMs?: number;
      onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void | Promise<void>;
    },
  ): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }>;
}
