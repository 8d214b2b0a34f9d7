/**
 * The deployment record, pure and on real SQLite: what a plan's commit writes (a new deployment
 * for a first run or an update, advanced by later batches, older or stopped ones cancelled in
 * Nomad's words), how an alloc's health verdict moves it (next batch, success, failure), and the
 * operator's actions on it.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CANCELLED_NEWER_JOB,
  CANCELLED_STOPPED_JOB,
  applyPlanToDeployment,
  deploymentAfter,
  failsAtDeadline,
  planDeployment,
  progressCutoff,
  recordHealth,
  runningDeployment,
  type DeploymentJobRow,
} from '../../../agent/deploy/deployments.ts';
import { emptyPlan, type DeploymentBatch, type Plan } from '../../../agent/scheduler/index.ts';
import { AgentState, type StateEvent } from '../../../agent/state/store.ts';
import type { Deployment, Evaluation, JobRecord } from '../../../agent/state/types.ts';
import type { Allocation, Job } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { deploymentGroup, deploymentRecord } from './records.ts';

type Group = Deployment['taskGroups'][string];
const NOW = 1_700_000_000_000;
const INDEX = 40;

const rec = (over: Partial<DeploymentJobRow> = {}): DeploymentJobRow => ({
  id: 'web',
  namespace: 'ns',
  version: 2,
  jobModifyIndex: 30,
  createIndex: 3,
  stop: false,
  ...over,
});
const batch = (over: Partial<DeploymentBatch> = {}): DeploymentBatch => ({
  maxParallel: 1,
  desiredTotal: 2,
  replaced: 0,
  remaining: 0,
  inFlight: 0,
  failed: false,
  desiredCanaries: 0,
  promoted: true,
  ...over,
});
/** The group entry a plan writes for `g`: Nomad's default health timings, no canaries. */
const PLANNED = {
  minHealthyTimeMs: 10_000,
  healthyDeadlineMs: 300_000,
  desiredCanaries: 0,
  placedCanaries: [],
  promoted: true,
  autoRevert: false,
  autoPromote: false,
};
const group = (over: Partial<Group> = {}): Group => deploymentGroup({ ...PLANNED, ...over });
const deployment = (id: string, over: Partial<Deployment> = {}): Deployment =>
  deploymentRecord(id, {
    namespace: 'ns',
    jobVersion: 2,
    jobModifyIndex: 30,
    jobCreateIndex: 3,
    taskGroups: { g: group() },
    createIndex: 10,
    modifyIndex: 10,
    createTime: NOW - 1000,
    modifyTime: NOW - 1000,
    ...over,
  });
const evalOf = (jobId = 'web'): Evaluation =>
  ({ id: 'e', jobId, type: 'service', priority: 50, triggeredBy: 'job-register', status: 'complete', createIndex: 1, modifyIndex: 1 }) as unknown as Evaluation;
const planOf = (over: Partial<Plan> = {}, jobId = 'web'): Plan => ({ ...emptyPlan(evalOf(jobId)), ...over });
const jobWith = (update: Record<string, unknown> | undefined): Job =>
  ({ id: 'web', name: 'web', type: 'service', taskGroups: [{ name: 'g', count: 2, tasks: [mockTask('t')], ...(update ? { update } : {}) }] }) as unknown as Job;
const alloc = (id: string, over: Partial<Allocation> = {}): Allocation => ({ ...makeAlloc([mockTask('t')], { taskGroup: 'g', ...over }), id });
const view = (deployments: Deployment[] = [], job: DeploymentJobRow | null = rec()) => ({
  jobs: new Map(job ? [[job.id, job]] : []),
  deployments: new Map(deployments.map((d) => [d.id, d])),
});
const plan = (v: ReturnType<typeof view>, p: Plan, job: Job | undefined = jobWith(undefined)) =>
  planDeployment(v, p, job, { index: INDEX, now: NOW, newId: () => 'new' });

describe('agent deployments: what a plan writes', () => {
  it('a first batch makes a running deployment of the job version, with the update block’s times (Nomad’s defaults when unset)', () => {
    const placed = [alloc('a1'), alloc('a2'), alloc('x', { taskGroup: 'other' })];
    const out = plan(view(), planOf({ place: placed, deployment: { g: batch() } }));
    expect([...out.deploymentOf]).to.deep.equal([['g', 'new']]);
    expect(out.rows).to.deep.equal([
      {
        id: 'new',
        namespace: 'ns',
        jobId: 'web',
        jobVersion: 2,
        jobModifyIndex: 30,
        jobCreateIndex: 3,
        status: 'running',
        statusDescription: 'Deployment is running',
        taskGroups: {
          g: group({ placedAllocs: 2, requireProgressBy: NOW + 600_000 }),
        },
        createIndex: INDEX,
        modifyIndex: INDEX,
        createTime: NOW,
        modifyTime: NOW,
      },
    ]);
    const set = plan(
      view(),
      planOf({ place: [alloc('a1')], deployment: { g: batch({ maxParallel: 2 }) } }),
      jobWith({ minHealthyTimeMs: 1, healthyDeadlineMs: 2, progressDeadlineMs: 0, autoRevert: true, autoPromote: true }),
    ).rows[0]!.taskGroups.g!;
    expect(set).to.deep.include({ maxParallel: 2, minHealthyTimeMs: 1, healthyDeadlineMs: 2, progressDeadlineMs: 0, autoRevert: true, autoPromote: true });
    expect(set, 'no progress deadline: none to meet').to.not.have.property('requireProgressBy');
  });

  it('a later batch advances the running deployment: counts added, its first deadline and totals kept; a canary is recorded', () => {
    const d = deployment('d1', { taskGroups: { g: group({ placedAllocs: 1, healthyAllocs: 1, requireProgressBy: NOW + 5, desiredTotal: 3 }) } });
    const canary = alloc('c', { deploymentStatus: { canary: true } });
    const out = plan(view([d]), planOf({ place: [alloc('a2'), canary], deployment: { g: batch({ desiredTotal: 9, remaining: 1 }) } }));
    expect(out.rows).to.have.length(1);
    expect(out.rows[0]).to.deep.include({ id: 'd1', createIndex: 10, createTime: NOW - 1000, modifyIndex: INDEX, modifyTime: NOW, status: 'running' });
    expect(out.rows[0]!.taskGroups.g).to.deep.include({
      placedAllocs: 3,
      healthyAllocs: 1,
      desiredTotal: 3,
      requireProgressBy: NOW + 5,
      placedCanaries: ['c'],
    });
    expect([...out.deploymentOf]).to.deep.equal([['g', 'd1']]);
  });

  it('a paused deployment of the version is advanced too; one that ended is not reused', () => {
    const paused = deployment('p', { status: 'paused', statusDescription: 'Deployment is paused' });
    const out = plan(view([paused]), planOf({ place: [alloc('a')], deployment: { g: batch({ remaining: 1 }) } }));
    expect(out.rows.map((r) => [r.id, r.status, r.statusDescription])).to.deep.equal([['p', 'paused', 'Deployment is paused']]);
    const ended = deployment('s', { status: 'successful' });
    expect(plan(view([ended]), planOf({ place: [alloc('a')], deployment: { g: batch() } })).rows.map((r) => r.id)).to.deep.equal(['new']);
  });

  it('an alloc updated in place joins the deployment, counted healthy when it runs healthy; with nothing left to see it ends successful', () => {
    const healthy = alloc('h', { clientStatus: 'running', deploymentStatus: { healthy: true } });
    const failedHealthy = alloc('f', { clientStatus: 'failed', deploymentStatus: { healthy: true } });
    const already = alloc('in', { deploymentId: 'new', clientStatus: 'running', deploymentStatus: { healthy: true } });
    const out = plan(view(), planOf({ inPlace: [healthy, already], deployment: { g: batch({ desiredTotal: 1 }) } }));
    expect(out.rows[0]).to.deep.include({ status: 'successful', statusDescription: 'Deployment completed successfully' });
    expect(out.rows[0]!.taskGroups.g).to.deep.include({ placedAllocs: 1, healthyAllocs: 1 });
    const short = plan(view(), planOf({ inPlace: [healthy, failedHealthy], deployment: { g: batch({ desiredTotal: 2 }) } }));
    expect(short.rows[0]).to.deep.include({ status: 'running' });
    expect(short.rows[0]!.taskGroups.g).to.deep.include({ placedAllocs: 2, healthyAllocs: 1 });
    const replacing = plan(view(), planOf({ inPlace: [healthy], deployment: { g: batch({ desiredTotal: 1, replaced: 1 }) } }));
    expect(replacing.rows[0]!.status, 'a replacement still to see healthy').to.equal('running');
    const remaining = plan(view(), planOf({ inPlace: [healthy], deployment: { g: batch({ desiredTotal: 1, remaining: 1 }) } }));
    expect(remaining.rows[0]!.status, 'a batch still to place').to.equal('running');
  });

  it('each group of a plan gets its own update block, its own placed, in-place and canary allocs; canaries waiting make the description say so', () => {
    const job = {
      id: 'web',
      name: 'web',
      type: 'service',
      taskGroups: [
        { name: 'a', count: 2, tasks: [mockTask('t')], update: { minHealthyTimeMs: 1, autoRevert: true } },
        { name: 'b', count: 1, tasks: [mockTask('t')], update: { minHealthyTimeMs: 2, autoPromote: false } },
      ],
    } as unknown as Job;
    const out = plan(
      view(),
      planOf({
        place: [alloc('pa', { taskGroup: 'a' }), alloc('cb', { taskGroup: 'b', deploymentStatus: { canary: true } })],
        inPlace: [
          alloc('ha', { taskGroup: 'a', clientStatus: 'running', deploymentStatus: { healthy: true } }),
          alloc('ua', { taskGroup: 'a', clientStatus: 'running' }),
        ],
        deployment: { a: batch({ remaining: 1 }), b: batch({ desiredTotal: 1, desiredCanaries: 1, promoted: false }) },
      }),
      job,
    );
    const { a, b } = out.rows[0]!.taskGroups;
    expect(a).to.deep.include({ placedAllocs: 3, healthyAllocs: 1, placedCanaries: [], minHealthyTimeMs: 1, autoRevert: true });
    expect(b).to.deep.include({ placedAllocs: 1, healthyAllocs: 0, placedCanaries: ['cb'], minHealthyTimeMs: 2, autoRevert: false });
    expect(out.rows[0]).to.deep.include({ status: 'running', statusDescription: 'Deployment is running but requires manual promotion' });
  });

  it('ends successful at once only when no group has more to place or to see healthy, and only a running deployment', () => {
    const healthy = (id: string, taskGroup: string) => alloc(id, { taskGroup, clientStatus: 'running', deploymentStatus: { healthy: true } });
    const inPlace = [healthy('a1', 'a'), healthy('b1', 'b')];
    const one = plan(view(), planOf({ inPlace, deployment: { a: batch({ desiredTotal: 1 }), b: batch({ desiredTotal: 1, replaced: 1 }) } }));
    expect(one.rows[0]!.status, 'group b still replaces').to.equal('running');
    const paused = deployment('p', {
      status: 'paused',
      statusDescription: 'Deployment is paused',
      taskGroups: { g: group({ desiredTotal: 1, placedAllocs: 0 }) },
    });
    const out = plan(view([paused]), planOf({ inPlace: [healthy('g1', 'g')], deployment: { g: batch({ desiredTotal: 1 }) } }));
    expect(out.rows.map((r) => [r.id, r.status, r.statusDescription, r.taskGroups.g!.healthyAllocs])).to.deep.equal([
      ['p', 'paused', 'Deployment is paused', 1],
    ]);
  });

  it('a batch that changes nothing in a running deployment writes no row; the deployment id still goes on the group', () => {
    const d = deployment('d1');
    const out = plan(view([d]), planOf({ deployment: { g: batch({ remaining: 1 }) } }));
    expect(out.rows).to.deep.equal([]);
    expect([...out.deploymentOf]).to.deep.equal([['g', 'd1']]);
  });

  it('no batch, or no stored job: no deployment made', () => {
    expect(plan(view(), planOf({ place: [alloc('a')] }))).to.deep.equal({ rows: [], deploymentOf: new Map() });
    expect(plan(view([], null), planOf({ place: [alloc('a')], deployment: { g: batch() } }))).to.deep.equal({ rows: [], deploymentOf: new Map() });
  });

  it('cancels, in Nomad’s words, a running or paused deployment of an older version, of an earlier job of the name, or of a stopped or gone job', () => {
    const older = deployment('old', { jobVersion: 1 });
    const pausedOlder = deployment('pold', { jobVersion: 0, status: 'paused' });
    const recreated = deployment('re', { jobCreateIndex: 1 });
    const current = deployment('cur');
    const ended = deployment('end', { jobVersion: 1, status: 'failed' });
    const otherJob = deployment('oth', { jobId: 'api', jobVersion: 0 });
    const out = plan(view([older, pausedOlder, recreated, current, ended, otherJob]), planOf());
    expect(out.rows.map((r) => [r.id, r.status, r.statusDescription, r.modifyIndex, r.modifyTime])).to.deep.equal([
      ['old', 'cancelled', CANCELLED_NEWER_JOB, INDEX, NOW],
      ['pold', 'cancelled', CANCELLED_NEWER_JOB, INDEX, NOW],
      ['re', 'cancelled', CANCELLED_NEWER_JOB, INDEX, NOW],
    ]);
    expect(CANCELLED_NEWER_JOB).to.equal('Cancelled due to newer version of job');
    const stopped = plan(view([current], rec({ stop: true })), planOf());
    expect(stopped.rows.map((r) => [r.id, r.statusDescription])).to.deep.equal([['cur', CANCELLED_STOPPED_JOB]]);
    expect(CANCELLED_STOPPED_JOB).to.equal('Cancelled because job is stopped');
    const gone = plan(view([current], null), planOf());
    expect(gone.rows.map((r) => [r.id, r.statusDescription])).to.deep.equal([['cur', CANCELLED_STOPPED_JOB]]);
  });

  it('runningDeployment finds the job version’s running or paused deployment only', () => {
    const v = view([
      deployment('a', { status: 'successful' }),
      deployment('b', { jobVersion: 1 }),
      deployment('c', { jobId: 'api' }),
      deployment('d', { status: 'paused' }),
    ]);
    expect(runningDeployment(v, 'web', 2)?.id).to.equal('d');
    expect(runningDeployment(v, 'web', 1)?.id).to.equal('b');
    expect(runningDeployment(v, 'web', 5)).to.equal(undefined);
  });
});

describe('agent deployments: health verdicts and operator actions (real SQLite)', () => {
  let dir: string;
  let state: AgentState;
  let events: StateEvent[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-deploy-'));
    state = new AgentState(join(dir, 'state.db'));
    events = [];
    state.events$.subscribe((e) => events.push(e));
  });
  afterEach(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const health = (a: Allocation, now = NOW) => state.commit((txn) => ({ out: recordHealth(state, a, txn, now), index: txn.index }));
  const store = (d: Deployment) => state.commit((txn) => txn.putDeployment(d));

  it('a healthy alloc counts, moves the progress deadline on and asks for the next batch; the last one ends it successful', () => {
    store(deployment('d', { taskGroups: { g: group({ desiredTotal: 2, requireProgressBy: NOW + 1 }) } }));
    const first = health(alloc('a1', { deploymentId: 'd', deploymentStatus: { healthy: true } }));
    expect(first.out).to.deep.equal({ evaluate: true });
    expect(state.deployments.get('d')).to.deep.include({ status: 'running', modifyIndex: first.index, modifyTime: NOW });
    expect(state.deployments.get('d')!.taskGroups.g).to.deep.include({ healthyAllocs: 1, unhealthyAllocs: 0, requireProgressBy: NOW + 600_000 });
    expect(events.at(-1)).to.deep.include({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: 'd' });
    const last = health(alloc('a2', { deploymentId: 'd', deploymentStatus: { healthy: true } }), NOW + 50);
    expect(last.out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')).to.deep.include({ status: 'successful', statusDescription: 'Deployment completed successfully' });
  });

  it('a group without a progress deadline keeps none', () => {
    store(deployment('d', { taskGroups: { g: group({ desiredTotal: 3, progressDeadlineMs: 0 }) } }));
    health(alloc('a1', { deploymentId: 'd', deploymentStatus: { healthy: true } }));
    expect(state.deployments.get('d')!.taskGroups.g).to.not.have.property('requireProgressBy');
  });

  it('an unhealthy alloc fails the deployment (no batch follows) and counts; a paused one still counts', () => {
    store(deployment('d', { status: 'paused' }));
    const out = health(alloc('a1', { deploymentId: 'd', deploymentStatus: { healthy: false } })).out;
    expect(out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')).to.deep.include({ status: 'failed', statusDescription: 'Failed due to unhealthy allocations' });
    expect(state.deployments.get('d')!.taskGroups.g).to.deep.include({ healthyAllocs: 0, unhealthyAllocs: 1 });
  });

  it('a failed deployment with canaries never promoted asks for an evaluation (to stop them); with auto_revert it names the version to revert to', () => {
    store(deployment('d', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c'], promoted: false }) } }));
    expect(health(alloc('c', { deploymentId: 'd', deploymentStatus: { healthy: false, canary: true } })).out).to.deep.equal({ evaluate: true });
    const v = (version: number, env: string): JobRecord =>
      ({
        id: 'web',
        namespace: 'ns',
        version,
        apiJob: { ID: 'web', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Env: { V: env } }] }] },
        createIndex: 1,
        modifyIndex: 1,
        jobModifyIndex: 1,
        submitTime: 0,
        stop: false,
      }) as unknown as JobRecord;
    state.commit((txn) => {
      txn.putJob(v(1, 'a'));
      txn.putJob(v(2, 'b'));
      txn.putDeployment(deployment('ok', { jobVersion: 1, status: 'successful' }));
      txn.putDeployment(deployment('r', { taskGroups: { g: group({ autoRevert: true }) } }));
    });
    const out = health(alloc('x', { deploymentId: 'r', deploymentStatus: { healthy: false } })).out;
    expect(out.evaluate).to.equal(false);
    expect(out.revert?.version).to.equal(1);
    expect(state.deployments.get('r')!.statusDescription).to.equal('Failed due to unhealthy allocations - rolling back to job version 1');
  });

  it('a healthy alloc of one group leaves the deployment running while another group is short', () => {
    store(deployment('d', { taskGroups: { a: group({ desiredTotal: 1 }), b: group({ desiredTotal: 1 }) } }));
    expect(health(alloc('a1', { taskGroup: 'a', deploymentId: 'd', deploymentStatus: { healthy: true } })).out).to.deep.equal({ evaluate: true });
    expect(state.deployments.get('d')!.status).to.equal('running');
    expect(health(alloc('b1', { taskGroup: 'b', deploymentId: 'd', deploymentStatus: { healthy: true } })).out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')!.status).to.equal('successful');
  });

  it('an unhealthy alloc with auto_revert but no stable version fails it without a word on reverting', () => {
    store(deployment('d', { taskGroups: { g: group({ autoRevert: true }) } }));
    const out = health(alloc('x', { deploymentId: 'd', deploymentStatus: { healthy: false } })).out;
    expect(out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')!.statusDescription).to.equal('Failed due to unhealthy allocations');
  });

  it('an automatic promotion of canaries that are the whole group ends the deployment: no evaluation follows', () => {
    const canaried = { desiredCanaries: 1, placedCanaries: ['c'], promoted: false, autoPromote: true };
    store(deployment('d', { taskGroups: { g: group({ desiredTotal: 1, ...canaried }) } }));
    const c = alloc('c', { deploymentId: 'd', clientStatus: 'running', deploymentStatus: { healthy: true, canary: true } });
    state.commit((txn) => txn.putAlloc({ alloc: c, createIndex: 1, modifyIndex: 1 } as never));
    expect(health(c).out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')).to.deep.include({ status: 'successful', statusDescription: 'Deployment completed successfully' });
    expect(state.deployments.get('d')!.taskGroups.g!.promoted).to.equal(true);
  });

  it('a healthy canary of a paused deployment counts, but asks for no evaluation (nothing is placed while paused)', () => {
    store(deployment('d', { status: 'paused', taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c'], promoted: false }) } }));
    const out = health(alloc('c', { deploymentId: 'd', clientStatus: 'running', deploymentStatus: { healthy: true, canary: true } })).out;
    expect(out).to.deep.equal({ evaluate: false });
    expect(state.deployments.get('d')).to.deep.include({ status: 'paused' });
    expect(state.deployments.get('d')!.taskGroups.g!.healthyAllocs).to.equal(1);
  });

  it('an alloc of no deployment, an ended one, or a group it does not have changes nothing', () => {
    store(deployment('done', { status: 'successful' }));
    store(deployment('d'));
    const before = state.waiters.index;
    for (const a of [
      alloc('a'),
      alloc('b', { deploymentId: 'missing' }),
      alloc('c', { deploymentId: 'done' }),
      alloc('d', { deploymentId: 'd', taskGroup: 'other' }),
    ])
      expect(health({ ...a, deploymentStatus: { healthy: true } }).out).to.deep.equal({ evaluate: false });
    expect(state.waiters.index, 'nothing committed').to.equal(before);
  });

  it('applyPlanToDeployment writes the plan’s deployment rows with their events in the commit', () => {
    state.commit((txn) =>
      txn.putJob({ id: 'web', namespace: 'ns', version: 2, jobModifyIndex: 30, createIndex: 3, stop: false, apiJob: { ID: 'web' } } as unknown as JobRecord),
    );
    const of = state.commit((txn) => applyPlanToDeployment(state, planOf({ place: [alloc('a')], deployment: { g: batch() } }), jobWith(undefined), txn, NOW));
    const [id] = [...of.values()];
    expect(state.deployments.get(id!)).to.deep.include({ jobId: 'web', jobVersion: 2, status: 'running' });
    expect(events.filter((e) => e.topic === 'Deployment').map((e) => [e.type, e.key])).to.deep.equal([['DeploymentStatusUpdate', id]]);
  });

  it('operator actions: pause, resume (a batch only after a pause), fail, promote; refused once ended', () => {
    const d = deployment('d');
    expect(deploymentAfter(d, 'pause')).to.deep.equal({ next: { ...d, status: 'paused', statusDescription: 'Deployment is paused' }, evaluate: false });
    const paused = { ...d, status: 'paused' as const };
    expect(deploymentAfter(paused, 'resume')).to.deep.equal({ next: { ...d, status: 'running', statusDescription: 'Deployment is running' }, evaluate: true });
    expect((deploymentAfter(d, 'resume') as { evaluate: boolean }).evaluate).to.equal(false);
    expect(deploymentAfter(d, 'fail')).to.deep.equal({ next: { ...d, status: 'failed', statusDescription: 'Deployment marked as failed' }, evaluate: true });
    expect((deploymentAfter(paused, 'fail', { failDescription: 'why' }) as { next: Deployment }).next.statusDescription).to.equal('why');
    const canaried = deployment('c', { taskGroups: { g: group({ desiredCanaries: 1, placedCanaries: ['c1'], promoted: false }) } });
    expect(deploymentAfter(canaried, 'promote')).to.equal('1 error occurred:\n\t* Task group "g" has 0/1 healthy allocations\n\n');
    const promoted = deploymentAfter(canaried, 'promote', { healthy: (id) => id === 'c1' }) as { next: Deployment; evaluate: boolean };
    expect(promoted.evaluate).to.equal(true);
    expect(promoted.next.taskGroups.g!.promoted).to.equal(true);
    for (const status of ['successful', 'failed', 'cancelled'] as const)
      for (const action of ['pause', 'resume', 'fail', 'promote'] as const)
        expect(deploymentAfter({ ...d, status }, action)).to.equal(`can't ${action} terminal deployment`);
  });
});

describe('agent deployments: the progress deadline', () => {
  it('is the earliest deadline of the groups not done: a group waiting for promotion is not done, even with its total healthy', () => {
    const d = deployment('d', {
      taskGroups: {
        b: group({ requireProgressBy: 500 }),
        a: group({ desiredTotal: 1, healthyAllocs: 1, desiredCanaries: 1, placedCanaries: ['c'], promoted: false, requireProgressBy: 100 }),
        done: group({ desiredTotal: 1, healthyAllocs: 1, desiredCanaries: 1, placedCanaries: ['p'], promoted: true, requireProgressBy: 50 }),
        clockless: group(),
      },
    });
    expect(progressCutoff(d)).to.equal(100);
  });

  it('fails a running deployment whose group without canaries is short of its total, as the scheduler writes such a group (promoted false)', () => {
    const plain = deployment('d', { taskGroups: { g: group({ desiredCanaries: 0, promoted: false, healthyAllocs: 1, desiredTotal: 2 }) } });
    expect(failsAtDeadline(plain)).to.equal(true);
    expect(failsAtDeadline(deployment('e', { taskGroups: { g: group({ desiredCanaries: 0, promoted: false, healthyAllocs: 2, desiredTotal: 2 }) } }))).to.equal(
      false,
    );
  });
});
