/** Allocations and waits shared by the client-level benchmarks. @module */
import { randomUUID } from 'node:crypto';
import type { AnyActorRef } from 'xstate';
import type { AllocRunner } from '../../actors/client/types.ts';
import type { Allocation, Task, TaskState } from '../../model/types.ts';

/** A one-group allocation of one mock task (`run_for` 1h unless given). */
export function mockAlloc(over: Partial<Allocation> = {}, config: Record<string, unknown> = { run_for: '1h' }): Allocation {
  const task: Task = { name: 'web', driver: 'mock_driver', config };
  return {
    id: randomUUID(),
    nodeId: 'node-1',
    jobId: 'bench',
    job: { id: 'bench', name: 'bench', type: 'service', taskGroups: [{ name: 'web', count: 1, tasks: [task] }] },
    taskGroup: 'web',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
    ...over,
  };
}

/** Resolves once the runner's machine snapshot satisfies `pred`. */
export function snapshotWhere(runner: AllocRunner, pred: (s: ReturnType<AnyActorRef['getSnapshot']>) => boolean): Promise<void> {
  const actor = (runner as unknown as { actor: AnyActorRef }).actor;
  if (pred(actor.getSnapshot())) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const sub = actor.subscribe({
      next: (s) => {
        if (pred(s)) {
          sub.unsubscribe();
          resolve();
        }
      },
      error: reject,
    });
  });
}

/** Resolves once the runner reached `stopping.stopped` (stopped by an update, not destroyed). */
export const waitStopped = (r: AllocRunner) => snapshotWhere(r, (s) => s.matches({ stopping: 'stopped' }) || s.matches('destroyed'));

/**
 * Resolves once every task of the runner's alloc is `running` (the alloc machine's `running`
 * state is entered before its tasks start). Rejects when a task is dead instead, or was never
 * started, so a lifecycle figure cannot silently measure allocs whose tasks did not run.
 */
export async function waitTasksRunning(runner: AllocRunner): Promise<void> {
  const states = (s: ReturnType<AnyActorRef['getSnapshot']>) => Object.values((s.context as { taskStates?: Record<string, TaskState> }).taskStates ?? {});
  await snapshotWhere(runner, (s) => {
    const ts = states(s);
    return (ts.length > 0 && ts.every((t) => t.state === 'running')) || ts.some((t) => t.state === 'dead');
  });
  const dead = Object.entries(runner.alloc().taskStates ?? {}).filter(([, t]) => t.state !== 'running');
  if (dead.length) throw new Error(`alloc ${runner.alloc().id}: task ${dead[0]![0]} is ${dead[0]![1].state}, not running`);
}
