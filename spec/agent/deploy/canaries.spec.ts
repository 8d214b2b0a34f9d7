/**
 * Canary state on the agent's real state (SQLite): what the scheduler is told of each
 * deployment's canaries, which allocs count as healthy canaries, a promotion's commit (the
 * canary mark taken off, the progress clock restarted), and promotion by group.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autoPromotes, canaryStates, commitPromotion, healthyIn, promotedDeployment, RUNNING, runningDescription } from '../../../agent/deploy/canaries.ts';
import { AgentState, type StateEvent } from '../../../agent/state/store.ts';
import type { Deployment, ServerAlloc } from '../../../agent/state/types.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { deploymentGroup, deploymentRecord } from './records.ts';

const NOW = 1_700_000_000_000;
const group = deploymentGroup;
const deployment = (id: string, over: Partial<Deployment> = {}): Deployment =>
  deploymentRecord(id, {
    statusDescription: 'Deployment is running but requires manual promotion',
    taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c1'], promoted: false }) },
    ...over,
  });
const alloc = (id: string, over: Partial<Allocation> = {}): Allocation => ({
  ...makeAlloc([mockTask('t')], { taskGroup: 'g', clientStatus: 'running', deploymentStatus: { healthy: true, canary: true }, ...over }),
  id,
});

describe('agent deployments: canary state', () => {
  let dir: string;
  let state: AgentState;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-canaries-'));
    state = new AgentState(join(dir, 'state.db'));
  });
  afterEach(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = (...ds: Deployment[]) => state.commit((txn) => ds.forEach((d) => txn.putDeployment(d)));
  const putAlloc = (...as: Allocation[]) => state.commit((txn) => as.forEach((a) => txn.putAlloc({ alloc: a, createIndex: 1, modifyIndex: 1 } as ServerAlloc)));

  it('tells the scheduler each running, paused or failed deployment’s canaries by job version and group', () => {
    put(
      deployment('run', { taskGroups: { g: group({ desiredCanaries: 2, placedCanaries: ['a', 'b'], promoted: true }), plain: group() } }),
      deployment('pause', { jobVersion: 2, status: 'paused' }),
      deployment('fail', { jobId: 'api', status: 'failed' }),
      deployment('done', { jobVersion: 3, status: 'successful' }),
      deployment('gone', { jobVersion: 4, status: 'cancelled' }),
    );
    expect(canaryStates(state)).to.deep.equal({
      'web@1': {
        g: { desiredCanaries: 2, placedCanaries: ['a', 'b'], promoted: true },
        plain: { desiredCanaries: 0, placedCanaries: [], promoted: false },
      },
      'web@2': { g: { desiredCanaries: 1, placedCanaries: ['c1'], promoted: false } },
      'api@1': { g: { desiredCanaries: 1, placedCanaries: ['c1'], promoted: false, failed: true } },
    });
  });

  it('a version deployed again after a failure goes by its newest deployment, whichever was stored first', () => {
    put(
      deployment('failed', { status: 'failed' }),
      deployment('again', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c2'], promoted: false }) } }),
    );
    expect(canaryStates(state)['web@1']!.g).to.deep.equal({ desiredCanaries: 1, placedCanaries: ['c2'], promoted: false });
    state.commit((txn) => {
      txn.deleteDeployment('failed');
      txn.deleteDeployment('again');
    });
    put(
      deployment('again', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c2'], promoted: false }) } }),
      deployment('failed', { status: 'failed' }),
    );
    expect(canaryStates(state)['web@1']!.g, 'a failed one after a live one does not win').to.deep.equal({
      desiredCanaries: 1,
      placedCanaries: ['c2'],
      promoted: false,
    });
    state.commit((txn) => {
      txn.deleteDeployment('failed');
      txn.deleteDeployment('again');
    });
    put(
      deployment('f1', { status: 'failed' }),
      deployment('f2', { status: 'failed', taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c3'] }) } }),
    );
    expect(canaryStates(state)['web@1']!.g!.placedCanaries, 'two failed ones: the later').to.deep.equal(['c3']);
  });

  it('a healthy canary is a live alloc the client reports healthy; this commit’s copy goes first', () => {
    putAlloc(
      alloc('ok'),
      alloc('stopping', { desiredStatus: 'stop' }),
      alloc('failed', { clientStatus: 'failed' }),
      alloc('lost', { clientStatus: 'lost' }),
      alloc('unhealthy', { deploymentStatus: { healthy: false } }),
      alloc('unknown', { deploymentStatus: {} }),
      alloc('pending', { clientStatus: 'pending' }),
      alloc('unreported', { deploymentStatus: undefined }),
    );
    const healthy = healthyIn(state);
    expect(['ok', 'stopping', 'failed', 'lost', 'unhealthy', 'unknown', 'pending', 'unreported', 'missing'].filter(healthy)).to.deep.equal(['ok', 'pending']);
    expect(healthyIn(state, alloc('unhealthy'))('unhealthy'), 'the newer copy').to.equal(true);
    expect(healthyIn(state, alloc('ok', { deploymentStatus: { healthy: false } }))('ok')).to.equal(false);
    expect(healthyIn(state, alloc('other'))('ok'), 'another alloc’s copy changes nothing').to.equal(true);
  });

  it('a promotion’s commit takes the canary mark off its canaries, restarts the progress clock and says DeploymentPromotion', () => {
    const before = deployment('d', {
      taskGroups: {
        g: group({ desiredCanaries: 2, placedCanaries: ['c1', 'c2', 'nc', 'gone'], promoted: false, requireProgressBy: NOW - 5 }),
        idle: group({ desiredCanaries: 1, placedCanaries: ['i1'], promoted: false, requireProgressBy: NOW - 5, progressDeadlineMs: 0 }),
        clockless: group({ desiredCanaries: 1, placedCanaries: ['k1'], promoted: false }),
        already: group({ desiredCanaries: 1, placedCanaries: ['a1'], promoted: true, requireProgressBy: NOW - 5 }),
        left: group({ desiredCanaries: 1, placedCanaries: ['l1'], promoted: false, requireProgressBy: NOW - 5 }),
      },
    });
    put(before);
    putAlloc(alloc('c1'), alloc('c2'), alloc('nc', { deploymentStatus: { healthy: true, canary: false } }), alloc('i1'), alloc('k1'), alloc('a1'), alloc('l1'));
    const next: Deployment = {
      ...before,
      taskGroups: Object.fromEntries(Object.entries(before.taskGroups).map(([n, g]) => [n, n === 'left' ? g : { ...g, promoted: true }])),
    };
    const events: StateEvent[] = [];
    const sub = state.events$.subscribe((e) => events.push(e));
    const newer = alloc('c2', { deploymentStatus: { healthy: true, canary: true, timestamp: 7 } as never });
    const stored = state.commit((txn) => commitPromotion(state, before, next, txn, NOW, newer));
    sub.unsubscribe();
    expect(stored.modifyIndex).to.equal(state.waiters.index);
    expect(stored.modifyTime).to.equal(NOW);
    expect(stored.taskGroups.g!.requireProgressBy).to.equal(NOW + 600_000);
    expect(stored.taskGroups.idle!.requireProgressBy, 'no progress deadline: not restarted').to.equal(NOW - 5);
    expect(stored.taskGroups.clockless).to.not.have.property('requireProgressBy');
    expect(stored.taskGroups.already!.requireProgressBy, 'promoted before: not restarted').to.equal(NOW - 5);
    expect(state.deployments.get('d')).to.deep.equal(stored);
    const canary = (id: string) => state.allocs.get(id)!.alloc.deploymentStatus?.canary;
    expect(['c1', 'c2', 'i1', 'k1', 'a1', 'l1'].map(canary)).to.deep.equal([false, false, false, false, true, true]);
    expect(state.allocs.get('c2')!.alloc.deploymentStatus).to.deep.include({ timestamp: 7 });
    expect(state.allocs.get('c1')!.modifyIndex).to.equal(state.waiters.index);
    expect(events.map((e) => `${e.topic} ${e.type} ${e.key}`)).to.deep.equal([
      'Deployment DeploymentPromotion d',
      'Allocation AllocationUpdated c1',
      'Allocation AllocationUpdated c2',
      'Allocation AllocationUpdated i1',
      'Allocation AllocationUpdated k1',
    ]);
  });

  it('promotes only the groups asked for; refuses each short group in one multierror; keeps a paused deployment’s description', () => {
    const d = deployment('d', {
      taskGroups: {
        a: group({ desiredCanaries: 1, placedCanaries: ['a1'], promoted: false }),
        b: group({ desiredCanaries: 2, placedCanaries: ['b1', 'b2'], promoted: false }),
        none: group({ desiredCanaries: 0 }),
      },
    });
    const only = promotedDeployment(d, { all: false, groups: ['a'] }, (id) => id === 'a1') as Deployment;
    expect([only.taskGroups.a!.promoted, only.taskGroups.b!.promoted, only.statusDescription]).to.deep.equal([true, false, d.statusDescription]);
    expect(promotedDeployment(d, { all: true, groups: [] }, () => false)).to.equal(
      '2 errors occurred:\n\t* Task group "a" has 0/1 healthy allocations\n\t* Task group "b" has 0/2 healthy allocations\n\n',
    );
    expect(promotedDeployment(d, { all: false, groups: ['b'] }, (id) => id === 'b1')).to.equal(
      '1 error occurred:\n\t* Task group "b" has 1/2 healthy allocations\n\n',
    );
    const all = promotedDeployment(d, { all: true, groups: [] }, () => true) as Deployment;
    expect([all.status, all.statusDescription]).to.deep.equal(['running', RUNNING]);
    const paused = promotedDeployment(
      { ...d, status: 'paused', statusDescription: 'Deployment is paused' },
      { all: true, groups: [] },
      () => true,
    ) as Deployment;
    expect([paused.status, paused.statusDescription]).to.deep.equal(['paused', 'Deployment is paused']);
    const done = promotedDeployment(
      deployment('x', { taskGroups: { g: group({ desiredTotal: 1, healthyAllocs: 1, desiredCanaries: 1, placedCanaries: ['c1'], promoted: false }) } }),
      { all: true, groups: [] },
      () => true,
    ) as Deployment;
    expect([done.status, done.statusDescription]).to.deep.equal(['successful', 'Deployment completed successfully']);
  });

  it('a promotion by hand (no newer copy in the commit) takes the mark off the stored canaries; an alloc with no deployment status is left', () => {
    const before = deployment('d', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c1', 'bare'], promoted: false }) } });
    put(before);
    putAlloc(alloc('c1'), alloc('bare', { deploymentStatus: undefined }));
    const next = promotedDeployment(before, { all: true, groups: [] }, healthyIn(state)) as Deployment;
    state.commit((txn) => commitPromotion(state, before, next, txn, NOW));
    expect(state.deployments.get('d')!.taskGroups.g!.promoted).to.equal(true);
    expect(state.allocs.get('c1')!.alloc.deploymentStatus).to.deep.equal({ healthy: true, canary: false });
    expect([state.allocs.get('bare')!.alloc.deploymentStatus, state.allocs.get('bare')!.modifyIndex], 'not written').to.deep.equal([undefined, 1]);
  });
});

describe('agent deployments: canary policies over several groups', () => {
  const plain = (over: Partial<ReturnType<typeof group>> = {}) =>
    group({ desiredCanaries: 0, placedCanaries: [], promoted: false, autoPromote: false, ...over });
  const canaried = (over: Partial<ReturnType<typeof group>> = {}) => group({ desiredCanaries: 1, placedCanaries: ['c1'], promoted: false, ...over });
  const all = { all: true, groups: [] };

  it('a group without canaries (the scheduler writes it promoted: false) waits for no promotion', () => {
    expect(runningDescription({ g: plain() })).to.equal(RUNNING);
    expect(runningDescription({ g: canaried({ autoPromote: true }), other: plain() }), 'only the canaried groups say which promotion').to.equal(
      'Deployment is running pending automatic promotion',
    );
    const d = deployment('d', { taskGroups: { g: plain({ desiredTotal: 1, healthyAllocs: 1 }), h: plain({ desiredTotal: 2, healthyAllocs: 1 }) } });
    const promoted = promotedDeployment(d, all, () => true) as Deployment;
    expect([promoted.status, promoted.statusDescription], 'group h is short: not complete').to.deep.equal(['running', RUNNING]);
  });

  it('auto_promote: a group without canaries does not hold it back (as Nomad), a canaried group without auto_promote does', () => {
    const healthy = (id: string) => id === 'c1' || id === 'c2';
    expect(autoPromotes(deployment('d', { taskGroups: { g: canaried({ autoPromote: true }), other: plain() } }), healthy)).to.equal(true);
    const mixed = deployment('d', { taskGroups: { g: canaried({ autoPromote: true }), h: canaried({ placedCanaries: ['c2'] }) } });
    expect(autoPromotes(mixed, healthy)).to.equal(false);
  });

  it('a group whose canaries are not placed yet is neither promoted nor auto-promoted, whatever the health check says', () => {
    const unplaced = deployment('d', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: undefined, promoted: false, autoPromote: true }) } });
    expect(promotedDeployment(unplaced, all, () => true)).to.equal('1 error occurred:\n\t* Task group "g" has 0/1 healthy allocations\n\n');
    expect(autoPromotes(unplaced, () => true)).to.equal(false);
  });

  it('promoting a paused deployment whose canaries are the whole group keeps it paused', () => {
    const d = deployment('d', {
      status: 'paused',
      statusDescription: 'Deployment is paused',
      taskGroups: { g: canaried({ desiredTotal: 1, healthyAllocs: 1 }) },
    });
    const promoted = promotedDeployment(d, all, () => true) as Deployment;
    expect([promoted.status, promoted.statusDescription, promoted.taskGroups.g!.promoted]).to.deep.equal(['paused', 'Deployment is paused', true]);
  });
});
