/**
 * The bus's message kinds. Every message has a `type`, the `time` it was published (ms) and,
 * where it concerns one allocation, its `allocId`. Hosts filter with {@link Bus.of}.
 * @module
 */
import type { AllocState } from '../model/alloc-state.ts';
import type { HookKind } from '../model/hook-kind.ts';
import type { Allocation, TaskEvent, TaskState } from '../model/types.ts';
import type { ResourceUsage } from '../model/usage.ts';
import type { WatchMode, WatchResult, WatchRole } from '../model/watch.ts';

/** Every message kind and its payload. */
export interface BusMessageMap {
  /** The client's view of an alloc, meant for the servers (what `client.updates$` carries). */
  'alloc.updated': { allocId: string; alloc: Allocation };
  /** An alloc machine moved between top-level states. */
  'alloc.state': { allocId: string; from: AllocState | null; to: AllocState };
  /** A task state changed (running, dead, restarts, ...). */
  'task.state': { allocId: string; task: string; state: TaskState };
  /** A task event was appended (Nomad's exact type strings). */
  'task.event': { allocId: string; task: string; event: TaskEvent };
  /** A hook failed, of any kind. */
  'hook.error': { allocId: string; hook: string; kind: HookKind; error: string };
  /** An alloc started waiting on one watched alloc. */
  'watcher.waiting': { allocId: string; watchedAllocId: string; role: WatchRole; mode: WatchMode };
  /** A remote watcher's request failed and will be retried after `delayMs`. */
  'watcher.retry': { allocId: string; watchedAllocId: string; error: string; delayMs: number };
  /** A watched alloc no longer holds the alloc back, and why. */
  'watcher.released': { allocId: string } & WatchResult;
  /** Data migration began (`mode` local move or remote stream). */
  'migration.started': { allocId: string; previousAllocId: string; mode: WatchMode };
  /** Data migration was not needed or not possible. */
  'migration.skipped': { allocId: string; previousAllocId?: string; reason: string };
  /** Data migration finished. */
  'migration.done': { allocId: string; previousAllocId: string; mode: WatchMode; ms: number; bytes?: number };
  /** Data migration failed (soft: the alloc dir is rebuilt clean and the alloc goes on). */
  'migration.failed': { allocId: string; previousAllocId: string; error: string };
  /**
   * A chroot build under way, about every 200 ms: files embedded, dirs made, bytes copied so far;
   * `done` of `total` entries looked at (`total` once known: counted beside a first build).
   */
  'chroot.progress': { allocId: string; task: string; files: number; dirs: number; bytes: number; ms: number; done: number; total?: number };
  /** A chroot was built for a task. */
  'chroot.built': { allocId: string; task: string; files: number; dirs: number; links: number; copies: number; bytes: number; ms: number };
  /**
   * The garbage collector destroyed a terminal alloc: over the disk or inode threshold, over
   * `gcMaxAllocs`, or asked to (`client.gc()` / `client.gcAlloc()`).
   */
  'gc.collected': { allocId: string; reason: 'disk' | 'inodes' | 'count' | 'forced' };
  /**
   * At client start: the cgroup hierarchy berth uses (`version` null: none, and `message` says why).
   * `parent` is berth's parent cgroup in the first hierarchy.
   */
  'cgroups.detected': {
    version: 'v1' | 'v2' | null;
    controllers: string[];
    parent?: string;
    /** One line: the hierarchy used, or why none ("no cgroups: not root"). */
    message: string;
    /** Without cgroups: every reason in full (e.g. each EACCES), for a verbose mode. */
    detail?: string;
  };
  /** A running task's usage, every `ClientOptions.statsIntervalMs` (off by default). */
  'task.stats': { allocId: string; task: string; usage: ResourceUsage; timestamp: number };
  /**
   * A service check's result (every probe, and its initial status at registration): Nomad's
   * check status, its output (at most 4 KiB). `task` is the task the check belongs to, if any.
   */
  'check.status': { allocId: string; task?: string; service: string; check: string; status: 'passing' | 'warning' | 'critical'; output: string };
  /** The health tracker decided the alloc's health (once per alloc); `reason` says why when unhealthy. */
  'alloc.health': { allocId: string; healthy: boolean; reason: string };
  /** An actor failed in a way berth did not expect. */
  'client.error': { allocId?: string; actorId?: string; error: string };
  /**
   * A stanza berth does not run, left out of an allocation because the client runs with
   * `unsupported: 'warn'` ("template is not supported by berth (job.taskGroups[0].tasks[0].templates)").
   */
  'alloc.unsupported': { allocId: string; stanza: string; path: string; message: string };
}

/** A bus message kind. */
export type BusMessageType = keyof BusMessageMap;

/** One bus message of kind `T`. */
export type BusMessage<T extends BusMessageType = BusMessageType> = T extends BusMessageType ? { type: T; time: number } & BusMessageMap[T] : never;
