/**
 * The deployment watchers on a real state (SQLite): one `deployment-<id>` actor per running or
 * paused deployment, following each commit of its record (counts over its groups, paused and
 * resumed), gone once it ends; a timer at the progress deadline tells the agent. The client is
 * the far side: a stand-in that records the actors attached to its viewer.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyActorRef } from 'xstate';
import { DeploymentWatchers } from '../../../agent/deploy/watchers.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { Deployment } from '../../../agent/state/types.ts';
import type { Client } from '../../../index.ts';
import { ManualClock } from '../../support/fake-rpc.ts';
import { deploymentGroup, deploymentRecord } from './records.ts';

const group = deploymentGroup;
const deployment = (id: string, over: Partial<Deployment> = {}): Deployment =>
  deploymentRecord(id, {
    jobVersion: 3,
    taskGroups: { a: group(), b: group({ desiredTotal: 3, placedAllocs: 2, healthyAllocs: 1, unhealthyAllocs: 1 }) },
    ...over,
  });

describe('agent deployments: the watchers', () => {
  let dir: string;
  let state: AgentState;
  let attached: AnyActorRef[];
  let detached: string[];
  let watchers: DeploymentWatchers | undefined;
  const client = () => ({ attachActor: (a: AnyActorRef) => (attached.push(a), () => detached.push(a.id)) }) as unknown as Client;
  /** Commits `d` as the agent does: the row and its event. */
  const put = (d: Deployment) =>
    state.commit((txn) => {
      txn.putDeployment(d);
      txn.event({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: d.id, object: d });
    });
  const actor = (id: string) => attached.find((a) => a.id === `deployment-${id}`)!;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-watchers-'));
    state = new AgentState(join(dir, 'state.db'));
    attached = [];
    detached = [];
  });
  afterEach(() => {
    watchers?.stop();
    watchers = undefined;
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('watches the running and paused deployments found at start, with their counts over every group', () => {
    for (const d of [
      deployment('run'),
      deployment('pause', { status: 'paused' }),
      deployment('done', { status: 'successful' }),
      deployment('fail', { status: 'failed' }),
    ])
      state.commit((txn) => txn.putDeployment(d));
    watchers = new DeploymentWatchers(state, client());
    expect(watchers.watching).to.deep.equal(['run', 'pause']);
    const snap = actor('run').getSnapshot();
    expect(snap.value).to.equal('running');
    expect(snap.context).to.deep.include({
      deploymentId: 'run',
      jobId: 'web',
      jobVersion: 3,
      desiredTotal: 5,
      placedAllocs: 3,
      healthyAllocs: 1,
      unhealthyAllocs: 1,
    });
    expect(actor('pause').getSnapshot().value).to.equal('paused');
  });

  it('follows each commit: counts, pause and resume; drops the watcher once the deployment ends', () => {
    watchers = new DeploymentWatchers(state, client());
    put(deployment('d', { status: 'successful' }));
    expect([watchers.watching, attached.length], 'an ended deployment gets no watcher').to.deep.equal([[], 0]);
    put(deployment('d'));
    expect(watchers.watching).to.deep.equal(['d']);
    put(deployment('d', { taskGroups: { a: group({ healthyAllocs: 2 }) }, statusDescription: 'two healthy' }));
    expect(actor('d').getSnapshot().context).to.deep.include({ desiredTotal: 2, healthyAllocs: 2, statusDescription: 'two healthy' });
    put(deployment('d', { status: 'paused' }));
    expect(actor('d').getSnapshot().value).to.equal('paused');
    put(deployment('d'));
    expect(actor('d').getSnapshot().value).to.equal('running');
    put(deployment('d', { status: 'successful' }));
    expect(watchers.watching).to.deep.equal([]);
    expect(detached).to.deep.equal(['deployment-d']);
    expect(actor('d').getSnapshot().status).to.equal('done');
    state.commit((txn) => txn.event({ topic: 'Job', type: 'JobRegistered', key: 'd', object: deployment('d') }));
    expect(watchers.watching, 'only Deployment events count').to.deep.equal([]);
  });

  it('tells the agent when a running deployment’s progress deadline passes, at the earliest group’s deadline; a paused or ended one has no deadline', () => {
    const late: string[] = [];
    const clock = new ManualClock();
    clock.advance(1_000);
    watchers = new DeploymentWatchers(state, client(), (id) => late.push(id), clock);
    put(deployment('d', { taskGroups: { a: group({ requireProgressBy: 61_000 }), b: group({ requireProgressBy: 31_000 }) } }));
    expect([clock.scheduled, clock.pending], 'one timer, at the earliest deadline').to.deep.equal([[30_000], 1]);
    clock.advance(29_999);
    expect(late, 'not before its deadline').to.deep.equal([]);
    put(deployment('d', { status: 'paused', taskGroups: { a: group({ requireProgressBy: 0 }) } }));
    expect(clock.pending, 'paused: no deadline').to.equal(0);
    clock.advance(60_000);
    expect(late, 'a paused deployment past its deadline is not failed').to.deep.equal([]);
    put(deployment('d', { taskGroups: { a: group({ requireProgressBy: 0 }) } }));
    expect(clock.scheduled.at(-1), 'a deadline already past fires at once').to.equal(0);
    clock.advance(0);
    expect(late).to.deep.equal(['d']);
    put(deployment('e', { taskGroups: { a: group({ requireProgressBy: clock.now() + 10 }) } }));
    put(deployment('e', { status: 'failed' }));
    clock.advance(20);
    expect([late, clock.pending], 'an ended deployment’s timer went with it').to.deep.equal([['d'], 0]);
  });

  it('a new commit re-arms the deadline: the earlier timer is cleared', () => {
    const late: string[] = [];
    const clock = new ManualClock();
    watchers = new DeploymentWatchers(state, client(), (id) => late.push(id), clock);
    put(deployment('d', { taskGroups: { a: group({ requireProgressBy: 100 }) } }));
    put(deployment('d', { taskGroups: { a: group({ requireProgressBy: 500 }) } }));
    expect([clock.scheduled, clock.pending]).to.deep.equal([[100, 500], 1]);
    clock.advance(499);
    expect(late, 'the moved deadline is not reached yet').to.deep.equal([]);
    clock.advance(1);
    expect(late).to.deep.equal(['d']);
  });

  it('a paused deployment that ends successful (its last alloc healthy while paused) is no longer watched', () => {
    watchers = new DeploymentWatchers(state, client());
    put(deployment('d', { status: 'paused' }));
    put(deployment('d', { status: 'successful', statusDescription: 'Deployment completed successfully' }));
    expect(watchers.watching).to.deep.equal([]);
    expect(detached).to.deep.equal(['deployment-d']);
    expect(actor('d').getSnapshot().value).to.equal('successful');
  });

  it('arms no timer without a deadline handler, and stop() drops every watcher and stops listening', () => {
    const clock = new ManualClock();
    watchers = new DeploymentWatchers(state, client(), undefined, clock);
    put(deployment('a', { taskGroups: { a: group({ requireProgressBy: 60_000 }) } }));
    put(deployment('b'));
    expect(clock.scheduled).to.deep.equal([]);
    const withHandler = new ManualClock();
    const w = new DeploymentWatchers(state, client(), () => undefined, withHandler);
    expect(withHandler.pending, 'the running deployment found at start').to.equal(1);
    w.stop();
    expect(withHandler.pending).to.equal(0);
    watchers.stop();
    expect(watchers.watching).to.deep.equal([]);
    expect(detached.filter((d) => d === 'deployment-a')).to.have.length(2);
    put(deployment('c'));
    expect(watchers.watching).to.deep.equal([]);
  });
});
