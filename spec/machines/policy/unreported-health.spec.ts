/**
 * The server's one health rule of its own: a deployment alloc that ends failed or lost with no
 * verdict from its client counts unhealthy; otherwise the client's verdict (or none yet) stands.
 */
import { expect } from 'chai';
import { unreportedHealth } from '../../../machines/policy/alloc-health.ts';
import type { Allocation, TaskGroup } from '../../../model/types.ts';

const update = {
  maxParallel: 1,
  healthCheck: 'task_states' as const,
  minHealthyTimeMs: 1_000,
  healthyDeadlineMs: 60_000,
  progressDeadlineMs: 0,
  autoRevert: false,
  autoPromote: false,
  canary: 0,
  staggerMs: 0,
};
const group: TaskGroup = { name: 'g', update, tasks: [{ name: 't', driver: 'raw_exec', config: {} }] };

function alloc(over: Partial<Allocation>): Allocation {
  return {
    id: 'a',
    nodeId: 'n',
    jobId: 'j',
    job: { id: 'j', type: 'service', taskGroups: [group] },
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'running',
    allocModifyIndex: 1,
    deploymentId: 'd',
    ...over,
  };
}

describe('policy: unreported health (the server counts what the client reports)', () => {
  const rows: [string, Partial<Allocation>, TaskGroup | undefined, false | undefined][] = [
    ['failed, no verdict: unhealthy', { clientStatus: 'failed' }, group, false],
    ['lost, no verdict: unhealthy', { clientStatus: 'lost' }, group, false],
    ['running, no verdict: the client decides', {}, group, undefined],
    ['complete, no verdict: not a failure', { clientStatus: 'complete' }, group, undefined],
    ['failed after a healthy verdict: the verdict stands', { clientStatus: 'failed', deploymentStatus: { healthy: true } }, group, undefined],
    ['failed, not in a deployment', { clientStatus: 'failed', deploymentId: undefined }, group, undefined],
    ['failed, manual health: set by hand only', { clientStatus: 'failed' }, { ...group, update: { ...update, healthCheck: 'manual' } }, undefined],
    ['failed, group gone', { clientStatus: 'failed' }, undefined, undefined],
  ];
  for (const [name, over, g, want] of rows) {
    it(name, () => expect(unreportedHealth(alloc(over), g)).to.equal(want));
  }
});
