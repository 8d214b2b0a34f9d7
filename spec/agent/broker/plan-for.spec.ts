/**
 * `planFor` (agent/broker/broker.ts), the scheduling pass the broker commits and `job plan` shows,
 * over a real SQLite state with the broker's real passes before it: a rollout whose deployment is
 * paused or failed is held (no further replacement), one running, successful or cancelled is not;
 * the plan's allocs carry the index the commit will have; dynamic ports follow the broker's
 * `random`; each placement's metrics time it.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../../actors/client/client.ts';
import type { Client } from '../../../actors/client/types.ts';
import { EvalBroker, newEval, planFor } from '../../../agent/broker/broker.ts';
import { DEFAULT_PREEMPTION } from '../../../agent/config/config.ts';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import type { SchedulerNode } from '../../../agent/scheduler/index.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { ApiJob, Deployment, JobRecord } from '../../../agent/state/types.ts';

const NODE: SchedulerNode = {
  id: '00000000-0000-4000-8000-000000000001',
  resources: { cpuMHz: 2000, memoryMB: 1024, diskMB: 10_000, cores: 2 },
  portsInUse: [],
  drivers: ['mock_driver'],
  minDynamicPort: 30_000,
  maxDynamicPort: 30_009,
};

/** A service job `id` of `count` mock tasks; `env` tells versions apart (a change that replaces allocs). */
async function apiJob(id: string, count: number, env: string, group: Record<string, unknown> = {}): Promise<ApiJob> {
  const job = {
    ID: id,
    Type: 'service',
    TaskGroups: [
      {
        Name: 'g',
        Count: count,
        ...group,
        Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Env: { V: env }, Resources: { CPU: 10, MemoryMB: 10 } }],
      },
    ],
  };
  return (await parseJobspec(JSON.stringify(job), { filename: `job ${id}` })) as unknown as ApiJob;
}

describe('planFor: the pass the broker commits, over the stored deployments', function () {
  this.timeout(20_000);
  let dir: string;
  let state: AgentState;
  let client: Client;
  let broker: EvalBroker;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-plan-for-'));
    state = new AgentState(join(dir, 'server', 'state.db'));
    state.commit((txn) => txn.putSchedulerConfig({ preemption: { ...DEFAULT_PREEMPTION }, createIndex: txn.index, modifyIndex: txn.index }));
    client = createClient({ dataDir: join(dir, 'client'), nodeId: NODE.id });
    broker = new EvalBroker({ state, client, node: () => NODE, log: () => {} });
  });
  afterEach(async () => {
    await broker.stop();
    await Promise.allSettled(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Commits version `version` of `job` and processes its register evaluation. */
  async function register(job: ApiJob, version: number): Promise<void> {
    const id = state.commit((txn) => {
      const rec: JobRecord = {
        id: job.ID,
        namespace: 'default',
        version,
        apiJob: completeApiJob({ ...job, Version: version }),
        createIndex: state.jobs.get(job.ID)?.createIndex ?? txn.index,
        modifyIndex: txn.index,
        jobModifyIndex: txn.index,
        submitTime: 1,
        modifyTime: 1,
        stop: false,
      };
      txn.putJob(rec);
      return newEval(txn, state, job.ID, 'job-register', {}, rec).id;
    });
    broker.enqueue(id);
    await broker.idle();
  }

  /** A pending evaluation of `jobId`, committed (as the deployment watcher makes one). */
  const evalOf = (jobId: string) => state.commit((txn) => newEval(txn, state, jobId, 'deployment-watcher'));

  /**
   * `web` rolling from version 0 to 1, one alloc at a time: the first replacement is placed and
   * healthy, so the next pass replaces the second unless the rollout is held. Returns the
   * version-1 deployment.
   */
  async function halfRolled(): Promise<Deployment> {
    const update = { Update: { MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: 0, HealthyDeadline: 60e9 } };
    await register(await apiJob('web', 2, 'a', update), 0);
    await register(await apiJob('web', 2, 'b', update), 1);
    const replaced = [...state.allocs.values()].filter((s) => s.alloc.jobVersion === 1);
    expect(replaced, 'one replacement placed by the first pass').to.have.length(1);
    state.commit((txn) => {
      for (const s of state.allocs.values())
        if (s.alloc.desiredStatus === 'run')
          txn.putAlloc({
            ...s,
            alloc: { ...s.alloc, clientStatus: 'running', deploymentStatus: { healthy: true, timestamp: Date.now() } },
            modifyIndex: txn.index,
          });
    });
    const [dep] = [...state.deployments.values()].filter((d) => d.jobId === 'web' && d.jobVersion === 1);
    expect(dep, 'the rollout has a deployment').to.not.equal(undefined);
    return dep!;
  }

  const setStatus = (d: Deployment, status: Deployment['status']) => state.commit((txn) => txn.putDeployment({ ...d, status, modifyIndex: txn.index }));
  /** What the next pass of `web` replaces: the names it places and how many it stops. */
  const nextPass = () => {
    const plan = planFor(state, NODE, evalOf('web'));
    return { placed: plan.place.map((a) => `${a.name} v${a.jobVersion}`), stopped: plan.stop.length };
  };

  it('a paused or a failed deployment holds its rollout: the next pass replaces nothing', async () => {
    const dep = await halfRolled();
    for (const status of ['paused', 'failed'] as const) {
      setStatus(dep, status);
      expect(nextPass(), status).to.deep.equal({ placed: [], stopped: 0 });
    }
  });

  it('a running, successful or cancelled deployment does not hold it: the next pass replaces the second alloc', async () => {
    const dep = await halfRolled();
    for (const status of ['running', 'successful', 'cancelled'] as const) {
      setStatus(dep, status);
      expect(nextPass(), status).to.deep.equal({ placed: ['web.g[1] v1'], stopped: 1 });
    }
  });

  it("a paused deployment of another version or another job does not hold this one's rollout", async () => {
    const dep = await halfRolled();
    state.commit((txn) => {
      txn.putDeployment({ ...dep, id: 'older', jobVersion: 0, status: 'paused', modifyIndex: txn.index });
      txn.putDeployment({ ...dep, id: 'other-job', jobId: 'api', status: 'failed', modifyIndex: txn.index });
    });
    expect(nextPass()).to.deep.equal({ placed: ['web.g[1] v1'], stopped: 1 });
  });

  it('the plan’s allocs carry the index its commit will have, and each placement’s metrics time it', async () => {
    await register(await apiJob('web', 1, 'a'), 0);
    state.commit((txn) => {
      const rec = state.jobs.get('web')!;
      txn.putJob({
        ...rec,
        apiJob: completeApiJob({ ...rec.apiJob, TaskGroups: [{ ...rec.apiJob.TaskGroups![0]!, Count: 2 }] } as ApiJob),
        modifyIndex: txn.index,
      });
    });
    const ev = evalOf('web');
    const plan = planFor(state, NODE, ev);
    expect(plan.place).to.have.length(1);
    expect(plan.place[0]!.allocModifyIndex).to.equal(state.waiters.index + 1);
    // The commit the broker makes next takes that index: the dry run showed what it would write.
    broker.enqueue(ev.id);
    await broker.idle();
    expect(state.evals.get(ev.id)!.modifyIndex).to.equal(plan.place[0]!.allocModifyIndex);
    expect(plan.metrics[plan.place[0]!.id]!.allocationTimeMs).to.be.greaterThan(0);
  });

  it("dynamic ports are picked with the broker's random when it has one, else the lowest free port", async () => {
    const job = await apiJob('web', 1, 'a', { Networks: [{ DynamicPorts: [{ Label: 'http' }] }] });
    const portOf = () => {
      const [s] = [...state.allocs.values()].filter((r) => r.alloc.jobId === 'web' && r.alloc.desiredStatus === 'run');
      return s!.alloc.allocatedResources!.shared.ports!.map((p) => [p.label, p.value]);
    };
    await register(job, 0);
    expect(portOf(), 'the lowest free port').to.deep.equal([['http', 30_000]]);
    await broker.stop();
    // A broker with a random pick: half-way through the range of ten ports.
    broker = new EvalBroker({ state, client, node: () => NODE, log: () => {}, random: () => 0.5 });
    await register(await apiJob('web', 1, 'b', { Networks: [{ DynamicPorts: [{ Label: 'http' }] }] }), 1);
    expect(portOf()).to.deep.equal([['http', 30_005]]);
  });
});
