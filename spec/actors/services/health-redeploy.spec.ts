/**
 * The health tracker starts again when a running alloc is moved to another deployment (an
 * in-place update): the first deployment's verdict leaves the alloc's view, and the new
 * deployment gets its own verdict after min_healthy_time, as Nomad's health hook does.
 */
import { expect } from 'chai';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { Allocation } from '../../../model/types.ts';
import { AdvancingClock } from './support.ts';

const MIN_HEALTHY_MS = 7_000;
const DEADLINE_MS = 70_000;

describe('alloc health: a new deployment under a running alloc', function () {
  this.timeout(30_000);
  const newClient = useTempClients();

  it('drops the old verdict and decides again for the new deployment', async () => {
    const clock = new AdvancingClock(new Set([MIN_HEALTHY_MS, DEADLINE_MS]));
    const client = newClient({ clock });
    const health = record(client, 'alloc.health');
    const alloc: Allocation = makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['60'] }, killTimeoutMs: 1000 }], {
      deploymentId: 'dep-1',
      group: {
        update: {
          maxParallel: 1,
          healthCheck: 'task_states',
          minHealthyTimeMs: MIN_HEALTHY_MS,
          healthyDeadlineMs: DEADLINE_MS,
          progressDeadlineMs: 600_000,
          autoRevert: false,
          autoPromote: false,
          canary: 0,
          staggerMs: 30_000,
        },
      },
    });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'running');
    const waitHeld = async () => {
      for (let i = 0; i < 200 && clock.pending() < 2; i++) await new Promise((res) => setTimeout(res, 10));
    };
    await waitHeld();
    clock.advance(MIN_HEALTHY_MS);
    await viewWhere(client, r, (a) => a.deploymentStatus?.healthy === true);
    const first = r.alloc();
    expect(health.items.map((m) => m.healthy)).to.deep.equal([true]);

    // The servers move the alloc to deployment 2 (in place): its status is not set there yet.
    client.updateAlloc({ ...alloc, deploymentId: 'dep-2', allocModifyIndex: 2 });
    await viewWhere(client, r, (a) => a.deploymentId === 'dep-2' && a.deploymentStatus?.healthy === undefined);
    await waitHeld();
    clock.advance(MIN_HEALTHY_MS);
    await viewWhere(client, r, (a) => a.deploymentId === 'dep-2' && a.deploymentStatus?.healthy === true);
    const second = r.alloc();
    expect(second.deploymentStatus!.timestamp).to.be.greaterThan(first.deploymentStatus!.timestamp!);
    expect(health.items.map((m) => m.healthy)).to.deep.equal([true, true]);

    client.updateAlloc({ ...alloc, deploymentId: 'dep-2', desiredStatus: 'stop', allocModifyIndex: 3 });
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'dead');
  });
});
