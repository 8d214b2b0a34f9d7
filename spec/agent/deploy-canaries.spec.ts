/**
 * The deployment policies for canaries, on the agent's real state (SQLite): promotion and its
 * refusal in Nomad's words, `auto_promote`, the running description, a health verdict on a
 * canary, and `auto_revert`'s choice of the latest stable version (or none, or a no-op).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../index.ts';
import { autoPromotes, promotedDeployment, runningDescription } from '../../agent/deploy/canaries.ts';
import { deploymentAfter, failsAtDeadline, progressCutoff, recordHealth } from '../../agent/deploy/deployments.ts';
import { isStable, rollbackFor } from '../../agent/deploy/rollback.ts';
import { AgentState } from '../../agent/state/store.ts';
import type { Deployment, JobRecord } from '../../agent/state/types.ts';

type Group = Deployment['taskGroups'][string];

function group(over: Partial<Group> = {}): Group {
  return {
    desiredTotal: 2,
    placedAllocs: 1,
    healthyAllocs: 0,
    unhealthyAllocs: 0,
    maxParallel: 1,
    minHealthyTimeMs: 100,
    healthyDeadlineMs: 60_000,
    progressDeadlineMs: 600_000,
    desiredCanaries: 1,
    placedCanaries: ['c1'],
    promoted: false,
    autoRevert: false,
    autoPromote: false,
    ...over,
  };
}

function deployment(id: string, version: number, status: Deployment['status'], groups: Record<string, Group> = { g: group() }): Deployment {
  return {
    id,
    namespace: 'default',
    jobId: 'web',
    jobVersion: version,
    jobModifyIndex: 1,
    jobCreateIndex: 1,
    status,
    statusDescription: 'Deployment is running',
    taskGroups: groups,
    createIndex: 1,
    modifyIndex: 1,
    createTime: 0,
    modifyTime: 0,
  };
}

function version(v: number, env: string): JobRecord {
  return {
    id: 'web',
    namespace: 'default',
    version: v,
    apiJob: { ID: 'web', Name: 'web', Type: 'service', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Env: { V: env } }] }] },
    createIndex: 1,
    modifyIndex: 1,
    jobModifyIndex: 1,
    submitTime: 0,
    stop: false,
  };
}

const healthyIds =
  (...ids: string[]) =>
  (id: string) =>
    ids.includes(id);

describe('agent deployments: canary policies', () => {
  let dir: string;
  let state: AgentState;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-canary-'));
    state = new AgentState(join(dir, 'state.db'));
  });
  afterEach(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('promotion is refused, in Nomad multierror words, while a group has too few healthy canaries', () => {
    const d = deployment('d', 1, 'running', { a: group({ placedCanaries: ['c1'] }), b: group({ desiredCanaries: 2, placedCanaries: ['c2', 'c3'] }) });
    expect(promotedDeployment(d, { all: true, groups: [] }, healthyIds('c2'))).to.equal(
      '2 errors occurred:\n\t* Task group "a" has 0/1 healthy allocations\n\t* Task group "b" has 1/2 healthy allocations\n\n',
    );
    // Only the groups asked for are checked and promoted.
    const onlyA = promotedDeployment(d, { all: false, groups: ['a'] }, healthyIds('c1')) as Deployment;
    expect([onlyA.taskGroups.a!.promoted, onlyA.taskGroups.b!.promoted]).to.deep.equal([true, false]);
    expect(deploymentAfter(d, 'promote', { promote: { all: true, groups: [] }, healthy: healthyIds('c1', 'c2', 'c3') })).to.deep.include({ evaluate: true });
    // A group without canaries is promoted with nothing to check (Nomad's DesiredCanaries 0).
    const plain = deployment('p', 1, 'running', { g: group({ desiredCanaries: 0, placedCanaries: [] }) });
    expect((promotedDeployment(plain, { all: true, groups: [] }, () => false) as Deployment).taskGroups.g!.promoted).to.equal(true);
    expect(deploymentAfter(deployment('x', 1, 'successful'), 'promote')).to.equal("can't promote terminal deployment");
    // Canaries that are the whole group: promoting them completes the deployment (nothing else will report health).
    const whole = deployment('w', 1, 'running', { g: group({ desiredTotal: 1, healthyAllocs: 1 }) });
    expect(promotedDeployment(whole, { all: true, groups: [] }, healthyIds('c1'))).to.deep.include({
      status: 'successful',
      statusDescription: 'Deployment completed successfully',
    });
  });

  it('the running description says which promotion it waits for; auto_promote waits for every canary of every group', () => {
    expect(runningDescription({ g: group() })).to.equal('Deployment is running but requires manual promotion');
    expect(runningDescription({ g: group({ autoPromote: true }) })).to.equal('Deployment is running pending automatic promotion');
    expect(runningDescription({ g: group({ autoPromote: true }), h: group() })).to.equal('Deployment is running but requires manual promotion');
    expect(runningDescription({ g: group({ promoted: true }) })).to.equal('Deployment is running');
    const auto = deployment('d', 1, 'running', { g: group({ autoPromote: true, desiredCanaries: 2, placedCanaries: ['c1', 'c2'] }) });
    expect(autoPromotes(auto, healthyIds('c1'))).to.equal(false);
    expect(autoPromotes(auto, healthyIds('c1', 'c2'))).to.equal(true);
    expect(autoPromotes({ ...auto, status: 'paused' }, healthyIds('c1', 'c2'))).to.equal(false);
    expect(autoPromotes(deployment('m', 1, 'running'), healthyIds('c1'))).to.equal(false);
  });

  it('auto_revert picks the latest stable version; none, or one with the same spec, is said so', () => {
    const failing = deployment('d3', 3, 'running', { g: group({ autoRevert: true }) });
    state.commit((txn) => {
      for (const [v, env] of [
        [0, 'a'],
        [1, 'b'],
        [2, 'c'],
        [3, 'd'],
      ] as const)
        txn.putJob(version(v, env));
    });
    expect(rollbackFor(state, failing, 'Failed due to unhealthy allocations', false)).to.deep.equal({ description: 'Failed due to unhealthy allocations' });
    expect(rollbackFor(state, failing, 'Deployment marked as failed', true).description).to.equal(
      'Deployment marked as failed - no stable job version to auto revert to',
    );
    state.commit((txn) => {
      txn.putDeployment(deployment('d0', 0, 'successful'));
      txn.putDeployment(deployment('d1', 1, 'successful'));
      txn.putDeployment(deployment('d2', 2, 'failed'));
    });
    expect([0, 1, 2, 3].map((v) => isStable(state, 'web', v))).to.deep.equal([true, true, false, false]);
    const r = rollbackFor(state, failing, 'Failed due to unhealthy allocations', false);
    expect([r.description, r.revert?.version]).to.deep.equal(['Failed due to unhealthy allocations - rolling back to job version 1', 1]);
    // Without auto_revert: no rollback.
    expect(rollbackFor(state, deployment('d3', 3, 'running'), 'Deployment marked as failed', true)).to.deep.equal({
      description: 'Deployment marked as failed',
    });
    // Version 4 has version 1's spec: reverting to it could not help.
    state.commit((txn) => txn.putJob(version(4, 'b')));
    const noop = rollbackFor(state, deployment('d4', 4, 'running', { g: group({ autoRevert: true }) }), 'Failed due to unhealthy allocations', false);
    expect(noop).to.deep.equal({
      description: 'Failed due to unhealthy allocations - not rolling back to stable job version 1 as current job has same specification',
    });
  });

  it('a healthy canary leaves a manual deployment waiting; auto_promote promotes it and clears the canary mark; an unhealthy one fails it with the rollback', () => {
    const canary = (id: string, healthy: boolean, deploymentId: string): Allocation =>
      ({
        id,
        jobId: 'web',
        taskGroup: 'g',
        deploymentId,
        desiredStatus: 'run',
        clientStatus: 'running',
        deploymentStatus: { canary: true, healthy, timestamp: 1 },
      }) as Allocation;
    state.commit((txn) => {
      txn.putJob(version(0, 'a'));
      txn.putJob(version(1, 'b'));
      txn.putDeployment(deployment('d0', 0, 'successful'));
      txn.putDeployment(deployment('manual', 1, 'running'));
      txn.putDeployment(deployment('auto', 1, 'running', { g: group({ autoPromote: true }) }));
      txn.putDeployment(deployment('revert', 1, 'running', { g: group({ autoRevert: true }) }));
      for (const d of ['manual', 'auto', 'revert']) txn.putAlloc({ alloc: canary('c1', false, d), createIndex: 1, modifyIndex: 1 } as never);
    });
    const health = (deploymentId: string, healthy: boolean) =>
      state.commit((txn) => {
        const alloc = canary('c1', healthy, deploymentId);
        txn.putAlloc({ alloc, createIndex: 1, modifyIndex: txn.index } as never);
        return recordHealth(state, alloc, txn, 5);
      });

    expect(health('manual', true)).to.deep.equal({ evaluate: true });
    const manual = state.deployments.get('manual')!;
    expect([manual.status, manual.taskGroups.g!.healthyAllocs, manual.taskGroups.g!.promoted]).to.deep.equal(['running', 1, false]);

    expect(health('auto', true)).to.deep.equal({ evaluate: true });
    const auto = state.deployments.get('auto')!;
    expect([auto.status, auto.statusDescription, auto.taskGroups.g!.promoted]).to.deep.equal(['running', 'Deployment is running', true]);
    expect(state.allocs.get('c1')!.alloc.deploymentStatus).to.deep.equal({ canary: false, healthy: true, timestamp: 1 });

    // Unhealthy without auto_revert: failed, and an evaluation follows to stop the canary.
    state.commit((txn) => txn.putDeployment(deployment('plain', 1, 'running')));
    expect(health('plain', false)).to.deep.equal({ evaluate: true });
    expect(state.deployments.get('plain')!.statusDescription).to.equal('Failed due to unhealthy allocations');

    const out = health('revert', false);
    expect(out.revert?.version).to.equal(0);
    const failed = state.deployments.get('revert')!;
    expect([failed.status, failed.statusDescription]).to.deep.equal(['failed', 'Failed due to unhealthy allocations - rolling back to job version 0']);
  });

  it('progress deadline: the earliest of the groups not done; it fails a group short of healthy canaries (before promotion) or of its total', () => {
    const d = deployment('d', 1, 'running', {
      a: group({ requireProgressBy: 500, healthyAllocs: 1 }),
      b: group({ requireProgressBy: 300, desiredCanaries: 0, placedCanaries: [], healthyAllocs: 2 }),
      c: group({ requireProgressBy: 900 }),
    });
    // b is done (2/2 healthy): a's deadline is the next.
    expect(progressCutoff(d)).to.equal(500);
    // a waits for promotion with its canary healthy; c has none healthy.
    expect(failsAtDeadline(d)).to.equal(true);
    const { c: _c, ...rest } = d.taskGroups;
    expect(failsAtDeadline({ ...d, taskGroups: rest })).to.equal(false);
    expect(failsAtDeadline({ ...d, status: 'paused' })).to.equal(false);
    expect(failsAtDeadline(deployment('p', 1, 'running', { g: group({ promoted: true, healthyAllocs: 1 }) }))).to.equal(true);
    expect(progressCutoff(deployment('n', 1, 'running', { g: group() }))).to.equal(undefined);
  });
});
