import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { applyPlan, type AppliedPlan, type PlanView } from '../../../agent/broker/apply-plan.ts';
import { emptyPlan, type Plan } from '../../../agent/scheduler/index.ts';
import type { Deployment, Evaluation, JobRecord, ServerAlloc } from '../../../agent/state/types.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const NOW = 1_700_000_000_000;
const INDEX = 42;

function evalOf(id: string, over: Partial<Evaluation> = {}): Evaluation {
  return {
    id,
    priority: 50,
    type: 'service',
    triggeredBy: 'job-register',
    jobId: 'example',
    status: 'pending',
    createTime: NOW - 1000,
    modifyTime: NOW - 1000,
    createIndex: 10,
    modifyIndex: 10,
    ...over,
  };
}

function row(a: Allocation): ServerAlloc {
  return { alloc: a, createIndex: 5, modifyIndex: 5 };
}

function planOf(ev: Evaluation, over: Partial<Plan> = {}): Plan {
  return { ...emptyPlan({ ...ev, status: 'complete' }), ...over };
}

function viewOf(allocs: Allocation[], over: Partial<PlanView> = {}): PlanView {
  const rec = { id: 'example', namespace: 'default', version: 1, jobModifyIndex: 30, createIndex: 3, stop: false } as JobRecord;
  return {
    allocs: new Map(allocs.map((a) => [a.id, row(a)])),
    jobs: new Map([['example', rec]]),
    evals: new Map(),
    deployments: new Map<string, Deployment>(),
    ...over,
  };
}

function apply(view: PlanView, plan: Plan, ev: Evaluation): AppliedPlan {
  let n = 0;
  return applyPlan(view, plan, ev, undefined, { index: INDEX, snapshotIndex: INDEX - 1, now: NOW, newId: () => `dep-${++n}` });
}

const allocRows = (out: AppliedPlan) => out.writes.flatMap((w) => (w.table === 'alloc' ? [w] : []));
const evalRows = (out: AppliedPlan) => out.writes.flatMap((w) => (w.table === 'eval' ? [w.row] : []));

describe('applyPlan (the plan application the broker and the simulator share)', () => {
  const tasks = [mockTask('web')];

  it('a stop and its replacement: the stopped row written in this commit carries nextAllocation; calls are update then add', () => {
    const old = makeAlloc(tasks, { clientStatus: 'running' });
    const ev = evalOf('e1');
    const stopped = { ...old, desiredStatus: 'stop' as const, desiredDescription: 'alloc is being updated' };
    const next = makeAlloc(tasks, { previousAllocation: old.id });
    const out = apply(viewOf([old]), planOf(ev, { stop: [stopped], place: [next] }), ev);
    const rows = allocRows(out);
    const last = rows.filter((w) => w.row.alloc.id === old.id).at(-1)!;
    expect(last.row.nextAllocation).to.equal(next.id);
    expect(last.row.alloc.desiredStatus, 'the predecessor row is the stop, not the stale one').to.equal('stop');
    expect(last.row.alloc.clientStatus, 'the client report stays the server row’s').to.equal('running');
    expect(last.row.modifyIndex).to.equal(INDEX);
    expect(rows.find((w) => w.row.alloc.id === next.id)!.eventType).to.equal('PlanResult');
    expect(out.clientCalls.map((c) => [c.kind, c.alloc.id])).to.deep.equal([
      ['update', old.id],
      ['add', next.id],
    ]);
    expect(out.clientCalls[0]!.alloc.allocModifyIndex).to.equal(INDEX);
  });

  it('an eviction carries preemptedBy (its preemptor); the eval records the plan with its snapshot index', () => {
    const victim = makeAlloc(tasks, { clientStatus: 'running' });
    const ev = evalOf('e1');
    const placed = makeAlloc(tasks, { preemptedAllocations: [victim.id] });
    const evicted = { ...victim, desiredStatus: 'evict' as const, desiredDescription: `Preempted by alloc ID ${placed.id}` };
    const out = apply(viewOf([victim]), planOf(ev, { preempt: [evicted], place: [placed] }), ev);
    const victimRow = allocRows(out).find((w) => w.row.alloc.id === victim.id)!.row;
    expect(victimRow.preemptedBy).to.equal(placed.id);
    expect(victimRow.alloc.desiredStatus).to.equal('evict');
    const done = evalRows(out).at(-1)!;
    expect(done).to.include({ id: 'e1', status: 'complete', snapshotIndex: INDEX - 1, modifyIndex: INDEX, createIndex: 10 });
    expect(done.plan).to.deep.equal({ placed: [placed.id], stopped: [], preempted: [{ allocId: victim.id, by: placed.id }] });
  });

  it("a pass that blocks again refreshes the job's blocked eval (one per job: older extras canceled); new evals carry the jobModifyIndex; pending ones are the follow-ups", () => {
    const ev = evalOf('e2');
    const stale = evalOf('b0', { status: 'blocked', createTime: NOW - 3000 });
    const older = evalOf('b1', { status: 'blocked', createTime: NOW - 2000 });
    const other = evalOf('b9', { status: 'blocked', jobId: 'other' });
    const failedTgAllocs = { g: { coalescedFailures: 0, dimensionExhausted: { disk: 1 } } } as unknown as Evaluation['failedTgAllocs'];
    const blocked = evalOf('b2', { status: 'blocked', previousEval: 'e2', failedTgAllocs, queuedAllocations: { g: 3 } });
    const followUp = evalOf('f1', { status: 'pending', waitUntil: NOW + 5000 });
    const view = viewOf([], { evals: new Map([stale, older, other].map((e) => [e.id, e])) });
    const out = apply(view, planOf(ev, { evals: [blocked, followUp], eval: { ...ev, status: 'complete', blockedEval: 'b2' } }), ev);
    const byId = new Map(evalRows(out).map((e) => [e.id, e]));
    expect(byId.has('b2'), 'no second blocked eval').to.equal(false);
    expect(byId.get('b1')).to.deep.include({ status: 'blocked', modifyIndex: INDEX, jobModifyIndex: 30, failedTgAllocs, queuedAllocations: { g: 3 } });
    expect(byId.get('b0')).to.include({ status: 'canceled', modifyIndex: INDEX });
    expect(byId.has('b9'), 'another job’s blocked eval stays').to.equal(false);
    expect(byId.get('e2')).to.include({ blockedEval: 'b1' });
    expect(out.followUps).to.deep.equal(['f1']);
  });

  it('the first pass that blocks makes the blocked eval', () => {
    const ev = evalOf('e3');
    const blocked = evalOf('b3', { status: 'blocked', previousEval: 'e3' });
    const out = apply(viewOf([]), planOf(ev, { evals: [blocked], eval: { ...ev, status: 'complete', blockedEval: 'b3' } }), ev);
    const byId = new Map(evalRows(out).map((e) => [e.id, e]));
    expect(byId.get('b3')).to.include({ status: 'blocked', jobModifyIndex: 30, createIndex: INDEX });
    expect(byId.get('e3')).to.include({ blockedEval: 'b3' });
  });

  it('an alloc updated in place joins its group’s new deployment and is an update call; an attribute update is written, never sent', () => {
    const a = makeAlloc(tasks, { clientStatus: 'running', deploymentStatus: { healthy: true, timestamp: NOW - 1 } });
    const b = makeAlloc(tasks, { clientStatus: 'failed' });
    const ev = evalOf('e1');
    const batch = { maxParallel: 1, desiredTotal: 1, replaced: 0, remaining: 0, inFlight: 0, failed: false, desiredCanaries: 0, promoted: true };
    const plan = planOf(ev, { inPlace: [{ ...a, jobVersion: 1 }], attributeUpdates: [{ ...b, followupEvalId: 'f1' }], deployment: { web: batch } });
    const out = apply(viewOf([a, b]), plan, ev);
    const dep = out.writes.find((w) => w.table === 'deployment')!.row as Deployment;
    expect(dep).to.include({ id: 'dep-1', jobId: 'example', jobVersion: 1, createIndex: INDEX });
    expect(dep.taskGroups.web).to.include({ placedAllocs: 1, healthyAllocs: 1 });
    const rows = allocRows(out);
    expect(rows.find((w) => w.row.alloc.id === a.id)!.row.alloc.deploymentId).to.equal('dep-1');
    const attr = rows.find((w) => w.row.alloc.id === b.id)!.row.alloc;
    expect(attr.followupEvalId).to.equal('f1');
    expect(attr, 'an attribute update does not join the deployment').to.not.have.property('deploymentId');
    expect(out.clientCalls.map((c) => [c.kind, c.alloc.id])).to.deep.equal([['update', a.id]]);
  });

  it('a placement in a rolled group joins its deployment and keeps its metrics; preemptedBy names evictions only', () => {
    const ev = evalOf('e1');
    const placed = makeAlloc(tasks, { taskGroup: 'web' });
    const batch = { maxParallel: 1, desiredTotal: 1, replaced: 0, remaining: 0, inFlight: 0, failed: false, desiredCanaries: 0, promoted: true };
    const metrics = { nodesEvaluated: 1, nodesFiltered: 0, nodesAvailable: { dc1: 1 }, nodesExhausted: 0 } as unknown as Plan['metrics'][string];
    const out = apply(viewOf([]), planOf(ev, { place: [placed], deployment: { web: batch }, metrics: { [placed.id]: metrics } }), ev);
    const rows = allocRows(out);
    expect(rows.map((w) => [w.row.alloc.id, w.row.alloc.deploymentId, w.row.metrics, w.eventType])).to.deep.equal([
      [placed.id, 'dep-1', metrics, 'PlanResult'],
    ]);
    expect(out.preemptedBy).to.deep.equal(new Map());
    expect(evalRows(out).at(-1)!.plan).to.deep.equal({ placed: [placed.id], stopped: [], preempted: [] });
  });

  it('an eviction of a job no longer stored (purged meanwhile): its preemption eval is written and followed up, with no job index', () => {
    const victim = makeAlloc(tasks, { clientStatus: 'running', jobId: 'purged' });
    const ev = evalOf('e1');
    const placed = makeAlloc(tasks, { preemptedAllocations: [victim.id] });
    const evicted = { ...victim, desiredStatus: 'evict' as const };
    const preemption = evalOf('p1', { jobId: 'purged', triggeredBy: 'preemption' });
    const out = apply(viewOf([victim]), planOf(ev, { preempt: [evicted], place: [placed], evals: [preemption] }), ev);
    const made = evalRows(out).find((e) => e.id === 'p1')!;
    expect(made).to.include({ status: 'pending', jobId: 'purged', createIndex: INDEX, modifyIndex: INDEX });
    expect(made).to.not.have.property('jobModifyIndex');
    expect(out.followUps).to.deep.equal(['p1']);
    expect(out.preemptedBy).to.deep.equal(new Map([[victim.id, placed.id]]));
  });

  it('a pass that blocks nothing names no blocked eval on the eval it completes', () => {
    const ev = evalOf('e4');
    const out = apply(viewOf([]), planOf(ev), ev);
    expect(evalRows(out)).to.have.length(1);
    expect(evalRows(out)[0]).to.include({ id: 'e4', status: 'complete' }).and.not.have.property('blockedEval');
  });

  it("a job's blocked eval in its own namespace is the one refreshed, with the job version of the pass that blocked again", () => {
    const ev = evalOf('e5', { namespace: 'prod' });
    const kept = evalOf('b-prod', { status: 'blocked', namespace: 'prod', jobVersion: 0 });
    const elsewhere = evalOf('b-default', { status: 'blocked', jobVersion: 0, createTime: NOW });
    const view = viewOf([], { evals: new Map([kept, elsewhere].map((e) => [e.id, e])) });
    const blocked = (jobVersion?: number) => evalOf('b-new', { status: 'blocked', namespace: 'prod', ...(jobVersion !== undefined ? { jobVersion } : {}) });
    const rowsOf = (jobVersion?: number) =>
      new Map(
        evalRows(apply(view, planOf(ev, { evals: [blocked(jobVersion)], eval: { ...ev, status: 'complete', blockedEval: 'b-new' } }), ev)).map((e) => [
          e.id,
          e,
        ]),
      );
    const refreshed = rowsOf(1);
    expect([...refreshed.keys()].sort()).to.deep.equal(['b-prod', 'e5']);
    expect(refreshed.get('b-prod')).to.include({ status: 'blocked', namespace: 'prod', jobVersion: 1, modifyIndex: INDEX });
    expect(refreshed.get('e5')).to.include({ blockedEval: 'b-prod' });
    // A pass that does not say its job version leaves the kept eval's.
    expect(rowsOf(undefined).get('b-prod')).to.include({ jobVersion: 0 });
  });

  it('is pure: the view is left as it was', () => {
    const old = makeAlloc(tasks, { clientStatus: 'running' });
    const view = viewOf([old]);
    const before = JSON.stringify([...view.allocs]);
    const ev = evalOf('e1');
    apply(view, planOf(ev, { stop: [{ ...old, desiredStatus: 'stop' }], place: [makeAlloc(tasks, { previousAllocation: old.id })] }), ev);
    expect(JSON.stringify([...view.allocs])).to.equal(before);
  });

  it('is the one plan application: the broker and the simulator both import it', () => {
    for (const file of ['agent/broker/broker.ts', 'sim/jobs.ts']) {
      const src = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
      expect(src, file).to.match(/import \{[^}]*\bapplyPlan\b[^}]*\} from '(\.\/|\.\.\/agent\/broker\/)apply-plan\.ts'/);
    }
  });
});
