/** Allocations and waits shared by the client-level benchmarks. @module */
import { randomUUID } from 'node:crypto';
import type { AnyActorRef } from 'xstate';
import type { AllocRunner } from '../../actors/client/types.ts';
import type { Allocation, Task } from '../../model/types.ts';

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
