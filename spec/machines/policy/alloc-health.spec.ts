import { expect } from 'chai';
import { healthNow, healthParams, unhealthyTaskText, type HealthParams } from '../../../machines/policy/alloc-health.ts';
import type { Allocation, Task, TaskGroup, TaskState } from '../../../model/types.ts';

const web: Task = { name: 'web', driver: 'raw_exec', config: {}, services: [{ name: 'web', checks: [{ type: 'http', intervalMs: 1000, timeoutMs: 1000 }] }] };
const init: Task = { name: 'init', driver: 'raw_exec', config: {}, lifecycle: { hook: 'prestart' } };
const group: TaskGroup = { name: 'g', tasks: [init, web] };
const running: TaskState = { state: 'running', failed: false, restarts: 0, events: [] };
const doneOk: TaskState = { state: 'dead', failed: false, restarts: 0, events: [] };
const p: HealthParams = { useChecks: true, minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000, isDeploy: true };
const update = {
  maxParallel: 1,
  healthCheck: 'checks' as const,
  minHealthyTimeMs: 20_000,
  healthyDeadlineMs: 60_000,
  progressDeadlineMs: 0,
  autoRevert: false,
  autoPromote: false,
  canary: 0,
  staggerMs: 0,
};

function alloc(over: Partial<Allocation>, g: TaskGroup = group): Allocation {
  return {
    id: 'a',
    nodeId: 'n',
    jobId: 'j',
    job: { id: 'j', type: 'service', taskGroups: [g] },
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'running',
    allocModifyIndex: 1,
    ...over,
  };
}

describe('policy: alloc health (Nomad tracker)', () => {
  it('parameters: the update block for a deployment, the migrate defaults otherwise; none for manual, batch or decided', () => {
    expect(healthParams(alloc({ deploymentId: 'd' }, { ...group, update }), { ...group, update })).to.deep.equal({
      useChecks: true,
      minHealthyTimeMs: 20_000,
      healthyDeadlineMs: 60_000,
      isDeploy: true,
    });
    expect(healthParams(alloc({}), group)).to.deep.equal({ useChecks: true, minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000, isDeploy: false });
    expect(healthParams(alloc({ deploymentId: 'd' }), { ...group, update: { ...update, healthCheck: 'manual' } })).to.equal(undefined);
    expect(healthParams(alloc({ deploymentStatus: { healthy: true } }), group)).to.equal(undefined);
    const batch = alloc({});
    batch.job.type = 'batch';
    expect(healthParams(batch, group)).to.equal(undefined);
  });

  it('holds when every task runs (a prestart hook may have exited well) and every desired check passes', () => {
    expect(healthNow({ group, taskStates: { init: doneOk, web: running }, checks: [{ task: 'web', status: 'passing' }], useChecks: true })).to.deep.equal({
      holds: true,
    });
    expect(healthNow({ group, taskStates: { init: doneOk, web: running }, checks: [], useChecks: true }).holds).to.equal(false);
    expect(healthNow({ group, taskStates: { init: doneOk, web: running }, checks: [{ task: 'web', status: 'warning' }], useChecks: true }).holds).to.equal(
      false,
    );
    expect(healthNow({ group, taskStates: { init: doneOk, web: running }, checks: [], useChecks: false }).holds).to.equal(true);
    expect(healthNow({ group, taskStates: { init: doneOk, web: { ...running, failed: true } }, checks: [], useChecks: false })).to.deep.equal({
      failed: 'web',
      holds: false,
    });
  });

  it("gives Nomad's texts", () => {
    expect(unhealthyTaskText(web, { ...running, failed: true }, p, true, [], ['web'])).to.equal('Unhealthy because of failed task');
    expect(unhealthyTaskText(web, { ...running, state: 'pending' }, p, false, [], ['web'])).to.equal('Task not running by healthy_deadline of 5m0s');
    expect(unhealthyTaskText(web, running, p, false, [], ['web'])).to.equal('Task not running for min_healthy_time of 10s by healthy_deadline of 5m0s');
    expect(unhealthyTaskText(web, running, p, true, [{ task: 'web', status: 'critical' }], ['web'])).to.equal('Services not healthy by deadline: web');
    expect(unhealthyTaskText(web, running, p, true, [], ['web'])).to.equal('Only 0 out of 1 checks registered and passing');
    expect(unhealthyTaskText(web, running, p, true, [{ task: 'web', status: 'passing' }], ['web'])).to.equal(undefined);
    expect(unhealthyTaskText(init, doneOk, p, true, [], [])).to.equal(undefined);
  });
});
