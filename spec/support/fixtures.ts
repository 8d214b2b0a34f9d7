/** Test fixtures: allocations shaped like Nomad's mock allocs. */
import { v4 as uuid } from 'uuid';
import type { Allocation, Job, Task } from '../../model/types.ts';

/** A mock_driver task. */
export function mockTask(name: string, config: Record<string, unknown> = { run_for: '10s' }, extra: Partial<Task> = {}): Task {
  return { name, driver: 'mock_driver', config, ...extra };
}

/** An allocation of one group with the given tasks. */
export function makeAlloc(tasks: Task[], over: Partial<Allocation> & { jobType?: Job['type']; group?: Partial<Job['taskGroups'][number]> } = {}): Allocation {
  const { jobType, group, ...rest } = over;
  const job: Job = { id: 'example', name: 'example', type: jobType ?? 'service', taskGroups: [{ name: 'web', count: 1, tasks, ...(group ?? {}) }] };
  return {
    id: uuid(),
    nodeId: 'node-1',
    jobId: job.id,
    job,
    taskGroup: 'web',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
    ...rest,
  };
}

/** Nomad's mock.BatchAlloc(): batch job, task "web" on mock_driver with run_for 500ms. */
export function batchAlloc(runFor = '500ms'): Allocation {
  return makeAlloc([mockTask('web', { run_for: runFor })], {
    jobType: 'batch',
    group: { restartPolicy: { attempts: 3, intervalMs: 600_000, delayMs: 60_000, mode: 'delay' } },
  });
}
