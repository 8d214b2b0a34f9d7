/**
 * What a client's report changes in the server's alloc (pure): the client's fields, the health
 * verdict with the server's canary mark, "ended with no verdict" as unhealthy for a live
 * deployment, whether the report decides the deployment's count, and whether the alloc ended.
 */
import { expect } from 'chai';
import type { Allocation, TaskGroup } from '../../../index.ts';
import { CLIENT_FIELDS, clientChange, mergedAlloc, reportedHealth } from '../../../agent/allocs/client-report.ts';
import type { Deployment, ServerAlloc } from '../../../agent/state/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { deploymentRecord } from '../deploy/records.ts';
import { updateStrategy } from '../scheduler/support.ts';

const NOW = 1_700_000_000_000;

/** The server's alloc `a1` of group `g`, in deployment `d1` unless `over` says otherwise. */
function server(over: Partial<Allocation> = {}, group: Partial<TaskGroup> = {}): ServerAlloc {
  const alloc = {
    ...makeAlloc([mockTask('t')], { taskGroup: 'g', clientStatus: 'running', deploymentId: 'd1', group: { name: 'g', ...group }, ...over }),
    id: 'a1',
  };
  return { alloc, createIndex: 5, modifyIndex: 7 };
}

/** The client's report of `cur`: its own fields replaced by `over`. */
function report(cur: ServerAlloc, over: Partial<Allocation>): Allocation {
  return { ...cur.alloc, deploymentStatus: undefined, ...over };
}

const running = (status: Deployment['status'] = 'running'): Deployment => deploymentRecord('d1', { status });

describe('agent: a client report, what it changes (pure)', () => {
  it('the client owns exactly its status, description and task states', () => {
    expect([...CLIENT_FIELDS]).to.deep.equal(['clientStatus', 'clientDescription', 'taskStates']);
  });

  it('a report that repeats what the server has changes nothing (no commit)', () => {
    const cur = server({
      clientDescription: 'Tasks are running',
      taskStates: { t: { state: 'running', failed: false, restarts: 0, events: [] } } as Allocation['taskStates'],
    });
    expect(clientChange(cur, report(cur, {}), running(), NOW)).to.equal(undefined);
    // The same, with the health the server already holds.
    const healthy = server({ deploymentStatus: { healthy: true, timestamp: 1 } });
    expect(clientChange(healthy, report(healthy, { deploymentStatus: { healthy: true, timestamp: 1 } }), running(), NOW)).to.equal(undefined);
  });

  it('each client field alone is a change, and the merge takes it; one the report leaves out is cleared', () => {
    for (const over of [{ clientStatus: 'complete' }, { clientDescription: 'All tasks have completed' }, { taskStates: {} }] as Array<Partial<Allocation>>) {
      const cur = server({ clientDescription: 'Tasks are running' });
      const c = clientChange(cur, report(cur, over), undefined, NOW);
      expect(c, JSON.stringify(over)).to.not.equal(undefined);
      const merged = mergedAlloc(c!, NOW + 1);
      for (const [k, v] of Object.entries(over)) expect((merged as unknown as Record<string, unknown>)[k]).to.deep.equal(v);
      expect(merged.modifyTime).to.equal(NOW + 1);
    }
    const cur = server({ clientDescription: 'Tasks are running' });
    const merged = mergedAlloc(clientChange(cur, report(cur, { clientDescription: undefined }), undefined, NOW)!, NOW);
    expect(merged).to.not.have.property('clientDescription');
    // The server's own fields are the server's: a report cannot move them.
    const moved = mergedAlloc(clientChange(cur, report(cur, { clientStatus: 'failed', desiredStatus: 'stop', jobId: 'other' }), undefined, NOW)!, NOW);
    expect([moved.desiredStatus, moved.jobId, moved.clientStatus]).to.deep.equal(['run', 'example', 'failed']);
  });

  it("the client's verdict is taken with the server's canary mark; without a mark none is added", () => {
    const canary = server({ deploymentStatus: { canary: true } });
    expect(reportedHealth(canary, report(canary, { deploymentStatus: { healthy: true, timestamp: 9 } }), running(), NOW)).to.deep.equal({
      healthy: true,
      timestamp: 9,
      canary: true,
    });
    const notCanary = server({ deploymentStatus: { canary: false } });
    expect(reportedHealth(notCanary, report(notCanary, { deploymentStatus: { healthy: false, timestamp: 9 } }), running(), NOW)).to.deep.equal({
      healthy: false,
      timestamp: 9,
      canary: false,
    });
    const plain = server();
    expect(reportedHealth(plain, report(plain, { deploymentStatus: { healthy: true, timestamp: 9 } }), undefined, NOW)).to.deep.equal({
      healthy: true,
      timestamp: 9,
    });
  });

  it('an alloc of a running or paused deployment that ends failed or lost with no verdict is unhealthy now', () => {
    for (const status of ['running', 'paused'] as const)
      for (const clientStatus of ['failed', 'lost'] as const) {
        const cur = server({ deploymentStatus: { canary: true } });
        const c = clientChange(cur, report(cur, { clientStatus }), running(status), NOW);
        expect(c?.health, `${status}/${clientStatus}`).to.deep.equal({ healthy: false, timestamp: NOW, canary: true });
        expect(c?.decided).to.equal(true);
        expect(c?.ended).to.equal(true);
        expect(mergedAlloc(c!, NOW).deploymentStatus).to.deep.equal({ healthy: false, timestamp: NOW, canary: true });
      }
    const plain = server();
    expect(reportedHealth(plain, report(plain, { clientStatus: 'failed' }), running(), NOW)).to.deep.equal({ healthy: false, timestamp: NOW });
  });

  it('no verdict is made up: a complete alloc, an ended deployment, no deployment, a manual health check, an alloc already judged', () => {
    const cur = server();
    expect(reportedHealth(cur, report(cur, { clientStatus: 'complete' }), running(), NOW)).to.equal(undefined);
    for (const status of ['successful', 'failed', 'cancelled'] as const)
      expect(reportedHealth(cur, report(cur, { clientStatus: 'failed' }), running(status), NOW), status).to.equal(undefined);
    expect(reportedHealth(cur, report(cur, { clientStatus: 'failed' }), undefined, NOW)).to.equal(undefined);
    const update = updateStrategy({ maxParallel: 1, canary: 0, healthCheck: 'manual', minHealthyTimeMs: 10_000 });
    const manual = server({}, { update });
    // The same alloc with health from checks does get its verdict: the manual mode is what stops it.
    const checks = server({}, { update: { ...update, healthCheck: 'checks' } });
    expect(reportedHealth(checks, report(checks, { clientStatus: 'failed' }), running(), NOW)).to.deep.equal({ healthy: false, timestamp: NOW });
    expect(reportedHealth(manual, report(manual, { clientStatus: 'failed' }), running(), NOW)).to.equal(undefined);
    const judged = server({ deploymentStatus: { healthy: true, timestamp: 1 } });
    expect(reportedHealth(judged, report(judged, { clientStatus: 'failed' }), running(), NOW)).to.equal(undefined);
  });

  it("only the alloc's first verdict decides the deployment's count; a later one, or a bare canary mark, does not", () => {
    const fresh = server({ deploymentStatus: { canary: true } });
    expect(clientChange(fresh, report(fresh, { deploymentStatus: { healthy: true, timestamp: 2 } }), running(), NOW)?.decided).to.equal(true);
    const judged = server({ deploymentStatus: { healthy: true, timestamp: 1 } });
    const again = clientChange(judged, report(judged, { deploymentStatus: { healthy: false, timestamp: 2 } }), running(), NOW);
    expect(again?.health).to.deep.equal({ healthy: false, timestamp: 2 });
    expect(again?.decided).to.equal(false);
    const status = clientChange(fresh, report(fresh, { clientStatus: 'complete' }), running(), NOW);
    expect(status).to.not.have.property('health');
    expect(status?.decided).to.equal(false);
  });

  it('ended is the step into a terminal client status, once', () => {
    const cases: Array<[Allocation['clientStatus'], Allocation['clientStatus'], boolean]> = [
      ['running', 'complete', true],
      ['running', 'failed', true],
      ['pending', 'lost', true],
      ['pending', 'running', false],
      ['failed', 'complete', false],
    ];
    for (const [from, to, ended] of cases) {
      const cur = server({ clientStatus: from });
      expect(clientChange(cur, report(cur, { clientStatus: to }), undefined, NOW)?.ended, `${from} -> ${to}`).to.equal(ended);
    }
  });

  it("a change that says nothing of health keeps the server's verdict; a report with no verdict decides nothing", () => {
    const judged = server({ deploymentStatus: { healthy: true, timestamp: 1, canary: true } });
    const c = clientChange(judged, report(judged, { clientStatus: 'complete' }), running(), NOW)!;
    expect(mergedAlloc(c, NOW).deploymentStatus).to.deep.equal({ healthy: true, timestamp: 1, canary: true });
    const fresh = server({ deploymentStatus: { canary: true } });
    const noVerdict = clientChange(fresh, report(fresh, { deploymentStatus: { timestamp: 5 } }), running(), NOW)!;
    expect(noVerdict.health).to.deep.equal({ timestamp: 5, canary: true });
    expect(noVerdict.decided).to.equal(false);
  });

  it("the alloc's own group decides whether health is manual, in a job of several groups", () => {
    const update = updateStrategy({ maxParallel: 1, canary: 0, healthCheck: 'manual', minHealthyTimeMs: 10_000 });
    const cur = server({}, { update });
    // A first group, not the alloc's, whose health comes from checks.
    cur.alloc.job = {
      ...cur.alloc.job,
      taskGroups: [{ ...cur.alloc.job.taskGroups[0]!, name: 'other', update: { ...update, healthCheck: 'checks' } }, ...cur.alloc.job.taskGroups],
    };
    expect(reportedHealth(cur, report(cur, { clientStatus: 'failed' }), running(), NOW)).to.equal(undefined);
  });
});
