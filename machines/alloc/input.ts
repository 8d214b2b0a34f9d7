/**
 * What a runner starts its alloc chart with, decided here as a pure function of the alloc, what
 * the client saved of it, and what the client can reach: which restored tasks are orphans (an
 * update dropped them), whether a restored alloc is past its wait, and whether anything is
 * watched. The runner only gathers the facts and passes them in.
 * @module
 */
import { taskGroupOf } from '../../model/status.ts';
import type { Allocation, TaskGroup } from '../../model/types.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import { taskSettingsFor } from '../policy/task-settings.ts';
import type { AllocMachineInput } from './context.ts';

/** What the client saved of an alloc (a restore), if anything. */
export interface SavedAlloc {
  /** Task name -> the driver handle saved for it. */
  restoredHandles?: Record<string, TaskHandle>;
  /** Its destroy had begun when the client stopped. */
  destroyRequested?: boolean;
  /** Tasks whose process the restore found alive without a usable handle, and stopped. */
  lostRuns?: string[];
}

/** What the client can reach and how it is set up, as plain facts. */
export interface AllocSources {
  now: number;
  /** A local runner exists for `alloc.previousAllocation`. */
  previousRunner?: boolean;
  /** Preempted alloc id -> whether a local runner exists for it. */
  preemptedRunners?: Record<string, boolean>;
  /** The servers can be asked (remote watchers). */
  rpc?: boolean;
  prevAllocWaitTimeoutMs?: number;
  maxKillTimeoutMs: number;
  /** The host registered a hook with an `update` method. */
  hasUpdateHooks: boolean;
}

/** The chart's input and the two facts the runner needs beside it. */
export interface AllocStart {
  input: AllocMachineInput;
  /** The group the runner makes task dirs for: the alloc's, plus any orphaned restored task. */
  group: TaskGroup;
  /** A restored alloc whose tasks ever started: its wait and migration happened in its first life. */
  pastWait: boolean;
}

/** Decides the chart's input for `alloc` (see the module doc). */
export function allocMachineInput(alloc: Allocation, saved: SavedAlloc | undefined, sources: AllocSources): AllocStart {
  const serverGroup = taskGroupOf(alloc);
  const handles = saved?.restoredHandles;
  const restoring = !!handles;
  // A restored task whose definition an update dropped (its handle still names a process) is
  // brought back from its handle, only to be killed ("update missing task").
  const orphans = Object.entries(handles ?? {})
    .filter(([name]) => !serverGroup.tasks.some((t) => t.name === name))
    .map(([, h]) => h.config.task);
  const group = orphans.length ? { ...serverGroup, tasks: [...serverGroup.tasks, ...orphans] } : serverGroup;
  // A restored alloc whose tasks ever started already waited (and migrated) in its first
  // life; one restored before that waits again, or it could start beside its victims.
  // A task that is dead without ever starting (an update dropped it while the alloc waited)
  // says nothing about the wait: only a start does.
  const pastWait =
    restoring && (Object.keys(handles).length > 0 || Object.values(alloc.taskStates ?? {}).some((s) => s.startedAt !== undefined || s.state === 'running'));
  const { roles, tasks } = taskSettingsFor(
    orphans.length ? { ...alloc, job: { ...alloc.job, taskGroups: alloc.job.taskGroups.map((g) => (g === serverGroup ? group : g)) } } : alloc,
    sources.maxKillTimeoutMs,
  );
  // A run the restore had to stop is started again with an event saying so (see the task chart).
  for (const name of saved?.lostRuns ?? []) if (tasks[name]) tasks[name] = { ...tasks[name]!, lostRun: true };
  const hasWatched = !pastWait && (!!alloc.previousAllocation || (alloc.preemptedAllocations?.length ?? 0) > 0);
  // Task states come from this client's own records only (a restore), never from the servers.
  const machineAlloc: Allocation = { ...alloc };
  if (!restoring) delete machineAlloc.taskStates;
  const input: AllocMachineInput = {
    alloc: machineAlloc,
    roles,
    tasks,
    now: sources.now,
    hasWatched,
    prevAllocWaitTimeoutMs: sources.prevAllocWaitTimeoutMs,
    ...(restoring ? { restoredHandles: handles } : {}),
    ...(saved?.destroyRequested ? { destroyRequested: true } : {}),
    maxKillTimeoutMs: sources.maxKillTimeoutMs,
    // Only a restored alloc that got as far as running has a dir to lose (Nomad fails it then).
    restoring: pastWait,
    ...(orphans.length ? { removedTasks: orphans.map((t) => t.name) } : {}),
    hasUpdateHooks: sources.hasUpdateHooks,
    watchSources: {
      ...(sources.previousRunner ? { previousRunner: true } : {}),
      ...(sources.preemptedRunners
        ? { preemptedRunners: Object.fromEntries(Object.entries(sources.preemptedRunners).map(([id, r]) => [id, r ? true : null])) }
        : {}),
      ...(sources.rpc ? { rpc: true } : {}),
    },
  };
  return { input, group, pastWait };
}
