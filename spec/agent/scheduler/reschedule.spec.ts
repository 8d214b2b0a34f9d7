import { expect } from 'chai';
import type { Allocation, ReschedulePolicy } from '../../../index.ts';
import { nextDelay, nextRescheduleTime } from '../../../agent/scheduler/index.ts';
import { job, World } from './support.ts';

const policy = (p: Partial<ReschedulePolicy> = {}): ReschedulePolicy => ({
  attempts: 0,
  intervalMs: 0,
  delayMs: 30_000,
  delayFunction: 'exponential',
  maxDelayMs: 3_600_000,
  unlimited: true,
  ...p,
});

/** A failed alloc at `failedAt` with earlier reschedule delays `delays` (the last one just before). */
function failed(p: ReschedulePolicy, delays: number[], failedAt = 10_000_000): Allocation {
  const j = job('web', { group: { reschedulePolicy: p } });
  return {
    id: 'a',
    nodeId: 'node-1',
    jobId: 'web',
    job: j,
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'failed',
    allocModifyIndex: 1,
    name: 'web.g[0]',
    taskStates: { t: { state: 'dead', failed: true, restarts: 0, finishedAt: failedAt, events: [] } },
    rescheduleTracker: delays.length
      ? { events: delays.map((delayMs, i) => ({ rescheduleTime: failedAt - (delays.length - i) * 1000, prevAllocId: `p${i}`, prevNodeId: 'node-1', delayMs })) }
      : undefined,
  };
}

describe('scheduler: reschedule', () => {
  describe('the next delay (delay_function, max_delay)', () => {
    const cases: Array<{ fn: ReschedulePolicy['delayFunction']; delays: number[]; next: number; max?: number }> = [
      { fn: 'constant', delays: [], next: 30_000 },
      { fn: 'constant', delays: [30_000, 30_000], next: 30_000 },
      { fn: 'exponential', delays: [], next: 30_000 },
      { fn: 'exponential', delays: [30_000], next: 60_000 },
      { fn: 'exponential', delays: [30_000, 60_000, 120_000], next: 240_000 },
      { fn: 'exponential', delays: [30_000, 60_000], next: 100_000, max: 100_000 },
      { fn: 'fibonacci', delays: [30_000], next: 30_000 },
      { fn: 'fibonacci', delays: [30_000, 30_000], next: 60_000 },
      { fn: 'fibonacci', delays: [30_000, 30_000, 60_000], next: 90_000 },
      { fn: 'fibonacci', delays: [60_000, 90_000], next: 120_000, max: 120_000 },
    ];
    for (const c of cases) {
      it(`${c.fn} after [${c.delays.join(', ')}]${c.max ? ` (max ${c.max})` : ''}: ${c.next}`, () => {
        const p = policy({ delayFunction: c.fn, maxDelayMs: c.max ?? 3_600_000 });
        expect(nextDelay(failed(p, c.delays), p)).to.equal(c.next);
      });
    }
    it('constant keeps the delay, exponential doubles it, fibonacci adds the last two; max_delay caps them', () => {
      const d = (fn: ReschedulePolicy['delayFunction'], delays: number[], maxDelayMs = 3_600_000) => {
        const p = policy({ delayFunction: fn, maxDelayMs });
        return nextDelay(failed(p, delays), p);
      };
      expect(d('constant', [30_000, 30_000])).to.equal(30_000);
      expect(d('exponential', [30_000, 60_000])).to.equal(120_000);
      expect(d('fibonacci', [30_000, 30_000, 60_000])).to.equal(90_000);
      expect(d('exponential', [30_000, 60_000], 100_000)).to.equal(100_000);
      expect(d('fibonacci', [60_000, 90_000], 120_000)).to.equal(120_000);
    });
    it('a quiet spell longer than max_delay since the last reschedule resets to delay', () => {
      const p = policy({ delayFunction: 'exponential', maxDelayMs: 100_000 });
      const a = failed(p, [30_000, 60_000, 100_000]);
      a.rescheduleTracker!.events[2].rescheduleTime = 10_000_000 - 200_000;
      expect(nextDelay(a, p)).to.equal(30_000);
    });
  });

  describe('eligibility (attempts within interval, unlimited)', () => {
    const cases = [
      {
        name: 'attempts 2, none yet',
        p: policy({ unlimited: false, attempts: 2, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 5000 }),
        delays: [],
        eligible: true,
      },
      {
        name: 'attempts 2, one within the interval',
        p: policy({ unlimited: false, attempts: 2, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 5000 }),
        delays: [5000],
        eligible: true,
      },
      {
        name: 'attempts 2, two within the interval',
        p: policy({ unlimited: false, attempts: 2, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 5000 }),
        delays: [5000, 5000],
        eligible: false,
      },
      {
        name: 'attempts 1, one long before the interval',
        p: policy({ unlimited: false, attempts: 1, intervalMs: 500, delayFunction: 'constant', delayMs: 100 }),
        delays: [100],
        eligible: true,
      },
      { name: 'attempts 0, not unlimited', p: policy({ unlimited: false, attempts: 0 }), delays: [], eligible: false },
      { name: 'unlimited, many before', p: policy(), delays: [30_000, 60_000, 120_000, 240_000], eligible: true },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.eligible ? 'eligible' : 'not eligible'}`, () => {
        expect(nextRescheduleTime(failed(c.p, c.delays)).eligible).to.equal(c.eligible);
      });
    }
  });

  it('a failed alloc whose time has come is replaced on this node: previousAllocation, rescheduleTracker, old one stopped', () => {
    const w = new World();
    const p = policy({ unlimited: false, attempts: 3, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 0 });
    const [a] = w.register(job('web', { group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'failed');
    const plan = w.evaluate('web', 'alloc-failure');
    expect(plan.place).to.have.length(1);
    const b = plan.place[0];
    expect(b).to.include({ name: 'web.g[0]', previousAllocation: a.id });
    expect(b.rescheduleTracker).to.deep.equal({ events: [{ rescheduleTime: w.now, prevAllocId: a.id, prevNodeId: 'node-1', delayMs: 0 }] });
    expect(plan.stop.map((x) => [x.id, x.desiredDescription])).to.deep.equal([[a.id, 'alloc was rescheduled because it failed']]);
    expect(plan.desiredTgUpdates.g.rescheduleNow).to.equal(1);
    // Second failure: the tracker carries both events.
    w.client(b.id, 'failed');
    const again = w.evaluate('web', 'alloc-failure');
    expect(again.place[0].rescheduleTracker!.events.map((e) => e.prevAllocId)).to.deep.equal([a.id, b.id]);
  });

  it('a delayed reschedule becomes a follow-up eval with WaitUntil; processing it then replaces the alloc', () => {
    const w = new World();
    const p = policy({ delayFunction: 'constant', delayMs: 30_000 });
    const [a] = w.register(job('web', { count: 1, group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'failed');
    const plan = w.evaluate('web', 'alloc-failure');
    expect(plan.place).to.have.length(0);
    expect(plan.evals).to.have.length(1);
    const follow = plan.evals[0];
    expect(follow).to.include({
      triggeredBy: 'alloc-reschedule',
      status: 'pending',
      waitUntil: w.now + 30_000,
      statusDescription: 'created for delayed rescheduling',
      previousEval: plan.eval.id,
    });
    expect(plan.eval.nextEval).to.equal(follow.id);
    expect(plan.attributeUpdates.map((x) => [x.id, x.followupEvalId])).to.deep.equal([[a.id, follow.id]]);
    expect(plan.desiredTgUpdates.g.rescheduleLater).to.equal(1);
    // Not before its time (the agent's broker holds it); then it places the replacement.
    expect(w.drain()).to.deep.equal([]);
    w.now += 30_000;
    const [later] = w.drain();
    expect(later.place.map((x) => [x.name, x.previousAllocation])).to.deep.equal([['web.g[0]', a.id]]);
    expect(later.place[0].rescheduleTracker!.events[0].delayMs).to.equal(30_000);
  });

  it('failures within 5 s share one follow-up eval; later ones get their own', () => {
    const w = new World();
    const p = policy({ delayFunction: 'constant', delayMs: 60_000 });
    const allocs = w.register(job('web', { count: 3, group: { reschedulePolicy: p } })).place;
    w.client(allocs[0].id, 'failed', w.now);
    w.client(allocs[1].id, 'failed', w.now + 2000);
    w.client(allocs[2].id, 'failed', w.now + 9000);
    w.now += 9000;
    const plan = w.evaluate('web', 'alloc-failure');
    expect(plan.evals.map((e) => [e.triggeredBy, e.waitUntil])).to.deep.equal([
      ['alloc-reschedule', 1_060_000],
      ['alloc-failure', 1_069_000],
    ]);
    expect(plan.attributeUpdates.map((a) => a.followupEvalId)).to.deep.equal([plan.evals[0].id, plan.evals[0].id, plan.evals[1].id]);
  });

  it('attempts used up: the failed alloc stays, nothing is placed', () => {
    const w = new World();
    const p = policy({ unlimited: false, attempts: 1, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 0 });
    const [a] = w.register(job('web', { group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'failed');
    const [b] = w.evaluate('web', 'alloc-failure').place;
    w.client(b.id, 'failed');
    const plan = w.evaluate('web', 'alloc-failure');
    expect(plan.place).to.have.length(0);
    expect(plan.stop).to.have.length(0);
  });

  it('attempts used up, but forced (desiredTransition.forceReschedule): replaced now', () => {
    const w = new World();
    const p = policy({ unlimited: false, attempts: 0, intervalMs: 3_600_000, delayFunction: 'constant', delayMs: 0 });
    const [a] = w.register(job('web', { group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'failed');
    expect(w.evaluate('web', 'alloc-failure').place).to.have.length(0);
    w.allocs.set(a.id, { ...w.allocs.get(a.id)!, desiredTransition: { forceReschedule: true } });
    const plan = w.evaluate('web', 'job-register');
    expect(plan.place.map((x) => [x.name, x.previousAllocation])).to.deep.equal([['web.g[0]', a.id]]);
  });

  it('batch: a completed alloc is not replaced; a failed one is rescheduled', () => {
    const w = new World();
    const p = policy({ unlimited: false, attempts: 1, intervalMs: 86_400_000, delayFunction: 'constant', delayMs: 0 });
    const [a, b] = w.register(job('batch', { type: 'batch', count: 2, group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'complete');
    w.client(b.id, 'failed');
    const plan = w.evaluate('batch', 'alloc-failure');
    expect(plan.place.map((x) => [x.name, x.previousAllocation])).to.deep.equal([['batch.g[1]', b.id]]);
    w.client(plan.place[0].id, 'complete');
    expect(w.evaluate('batch', 'alloc-failure').place).to.have.length(0);
  });

  it('service: a completed alloc is replaced (a service should keep running)', () => {
    const w = new World();
    const [a] = w.register(job('web')).place;
    w.client(a.id, 'complete');
    expect(w.evaluate('web', 'alloc-failure').place.map((x) => [x.name, x.previousAllocation])).to.deep.equal([['web.g[0]', undefined]]);
  });

  it('a rescheduled alloc that does not fit stays failed (not stopped) and waits in the blocked eval', () => {
    const w = new World();
    const p = policy({ delayFunction: 'constant', delayMs: 0 });
    const [a] = w.register(job('web', { cpu: 1000, group: { reschedulePolicy: p } })).place;
    w.client(a.id, 'failed');
    w.register(job('hog', { cpu: 2500 }));
    const plan = w.evaluate('web', 'alloc-failure');
    expect(plan.place).to.have.length(0);
    expect(plan.stop).to.have.length(0);
    expect(plan.queued.g).to.equal(1);
    expect(plan.evals.map((e) => e.status)).to.deep.equal(['blocked']);
  });

  it('alloc stop (desired transition migrate): replaced under the same name, old one "being migrated"', () => {
    const w = new World();
    const [a] = w.register(job('web')).place;
    w.allocs.set(a.id, { ...a, clientStatus: 'running', desiredTransition: { migrate: true } });
    const plan = w.evaluate('web', 'alloc-stop');
    expect(plan.stop.map((x) => [x.id, x.desiredDescription])).to.deep.equal([[a.id, 'alloc is being migrated']]);
    expect(plan.place.map((x) => [x.name, x.previousAllocation])).to.deep.equal([['web.g[0]', a.id]]);
  });
});
