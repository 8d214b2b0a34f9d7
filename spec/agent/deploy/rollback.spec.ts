/**
 * `auto_revert`'s choice on the agent's real state (SQLite): which versions are stable (a
 * successful deployment of this job's version), which group's `auto_revert` counts, and which
 * spec the stable version is compared with (the failing deployment's own version, not the job's
 * newest).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStable, rollbackFor } from '../../../agent/deploy/rollback.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { Deployment, JobRecord } from '../../../agent/state/types.ts';
import { deploymentGroup, deploymentRecord } from './records.ts';

const FAILED = 'Failed due to unhealthy allocations';

/** Version `v` of job `web` whose one task runs with `V=env` (same env, same spec). */
const version = (v: number, env: string): JobRecord =>
  ({
    id: 'web',
    namespace: 'default',
    version: v,
    apiJob: { ID: 'web', Name: 'web', Type: 'service', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Env: { V: env } }] }] },
    createIndex: 1,
    modifyIndex: 1,
    jobModifyIndex: 1,
    submitTime: 0,
    stop: false,
  }) as unknown as JobRecord;

describe('agent deployments: auto_revert’s target', () => {
  let dir: string;
  let state: AgentState;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-rollback-'));
    state = new AgentState(join(dir, 'state.db'));
  });
  afterEach(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = (jobs: JobRecord[], deployments: Deployment[]) =>
    state.commit((txn) => {
      for (const j of jobs) txn.putJob(j);
      for (const d of deployments) txn.putDeployment(d);
    });
  const reverting = (id: string, jobVersion: number) => deploymentRecord(id, { jobVersion, taskGroups: { g: deploymentGroup({ autoRevert: true }) } });

  it('a version is stable by a successful deployment of this job only', () => {
    put(
      [],
      [deploymentRecord('other', { jobId: 'api', jobVersion: 1, status: 'successful' }), deploymentRecord('mine', { jobVersion: 2, status: 'successful' })],
    );
    expect([1, 2].map((v) => isStable(state, 'web', v))).to.deep.equal([false, true]);
  });

  it('one group with auto_revert is enough to revert the deployment', () => {
    put([version(1, 'a'), version(2, 'b')], [deploymentRecord('ok', { jobVersion: 1, status: 'successful' })]);
    const d = deploymentRecord('d', { jobVersion: 2, taskGroups: { g: deploymentGroup({ autoRevert: true }), h: deploymentGroup({ autoRevert: false }) } });
    const r = rollbackFor(state, d, FAILED, false);
    expect([r.description, r.revert?.version]).to.deep.equal([`${FAILED} - rolling back to job version 1`, 1]);
  });

  it('the failing version is never its own target, even once stable', () => {
    put(
      [version(1, 'a'), version(2, 'b')],
      [deploymentRecord('ok1', { jobVersion: 1, status: 'successful' }), deploymentRecord('ok2', { jobVersion: 2, status: 'successful' })],
    );
    const r = rollbackFor(state, reverting('again', 2), FAILED, false);
    expect([r.description, r.revert?.version]).to.deep.equal([`${FAILED} - rolling back to job version 1`, 1]);
  });

  it('compares the stable spec with the failing deployment’s own version, not with a newer version of the job', () => {
    // Version 3 (the job now) has version 1's spec; the deployment of version 2 still reverts to 1.
    put([version(1, 'a'), version(2, 'b'), version(3, 'a')], [deploymentRecord('ok', { jobVersion: 1, status: 'successful' })]);
    expect(state.jobs.get('web')!.version).to.equal(3);
    const r = rollbackFor(state, reverting('d', 2), FAILED, false);
    expect([r.description, r.revert?.version]).to.deep.equal([`${FAILED} - rolling back to job version 1`, 1]);
  });
});
