// Nomad's alloc reconciler for one group, as `nomad job plan` shows it (DesiredUpdates) and as
// the plan acts: counts up and down (highest indexes first, migrating allocs first), failed
// allocs rescheduled now or later, complete and lost ones, batch rules (a completed alloc still
// counts; an older version's terminal allocs do not), migrations, destructive updates within
// max_parallel, in-place updates, canaries before and after promotion.
import { expect } from 'chai';
import type { Allocation, Job } from '../../../index.ts';
import { desiredCount, reconcileGroup, type GroupResult } from '../../../agent/scheduler/reconcile.ts';
import type { CanaryState } from '../../../agent/scheduler/types.ts';
import { job, updateStrategy } from './support.ts';

const NOW = 1_000_000_000;
const update = (maxParallel: number, canary = 0) => updateStrategy({ maxParallel, canary, healthCheck: 'checks', minHealthyTimeMs: 10_000 });
const resched = (delayMs: number) => ({ attempts: 2, intervalMs: 3_600_000, delayMs, delayFunction: 'constant' as const, maxDelayMs: 0, unlimited: false });

/** Version `v` of `web` (group g); `config` changes the task (a destructive change). */
function version(v: number, over: { count?: number; type?: Job['type']; config?: string; update?: ReturnType<typeof update>; delayMs?: number } = {}): Job {
  const j = job('web', { version: v, count: over.count ?? 3, type: over.type, group: { update: over.update, reschedulePolicy: resched(over.delayMs ?? 0) } });
  if (over.config) j.taskGroups[0]!.tasks[0]!.config = { command: over.config };
  return j;
}

let ids = 0;
/** An alloc `web.g[i]` of job version `j`. */
function alloc(i: number, j: Job, over: Partial<Allocation> = {}): Allocation {
  const id = over.id ?? `a${++ids}`;
  const failed = over.clientStatus === 'failed';
  return {
    id,
    name: `web.g[${i}]`,
    jobId: 'web',
    taskGroup: 'g',
    job: j,
    jobVersion: j.version,
    desiredStatus: 'run',
    clientStatus: 'running',
    modifyTime: NOW - 10_000,
    taskStates: failed || over.clientStatus === 'complete' ? { t: { state: 'dead', failed, restarts: 0, finishedAt: NOW - 5_000, events: [] } } : undefined,
    ...over,
  } as Allocation;
}

/** What the plan shows and does, by alloc name. */
function summary(r: GroupResult) {
  const nonzero = Object.fromEntries(Object.entries(r.desired).filter(([, n]) => n !== 0));
  return {
    desired: nonzero,
    stop: r.stop.map((s) => `${s.alloc.name} ${s.description}`),
    place: r.place.map((p) => `${p.name}${p.reschedule ? ' reschedule' : ''}${p.stopPrevious ? ` (${p.stopPrevious})` : ''}`),
    missing: r.missing?.count ?? 0,
    destructive: r.destructive.map((p) => `${p.name} (${p.stopPrevious})`),
    inPlace: r.inPlace.map((a) => a.name),
    later: r.rescheduleLater.map((l) => `${l.alloc.name} at +${l.time - NOW}`),
    canaries: r.canaries.map((p) => p.name),
  };
}
const none = { desired: {}, stop: [], place: [], missing: 0, destructive: [], inPlace: [], later: [], canaries: [] };

function run(j: Job, allocs: Allocation[], over: { all?: Allocation[]; held?: boolean; canaries?: CanaryState; nodeEligible?: boolean } = {}) {
  const r = reconcileGroup({
    job: j,
    group: j.taskGroups[0]!,
    allocs,
    all: over.all ?? allocs,
    evalId: 'eval-1',
    now: NOW,
    held: over.held,
    canaries: over.canaries,
    nodeEligible: over.nodeEligible,
  });
  return { r, s: summary(r) };
}

describe('scheduler: reconciling one group', () => {
  describe('how many: system jobs one per node', () => {
    const cases: Array<[Job['type'], number | undefined, number]> = [
      ['service', 3, 3],
      ['batch', 2, 2],
      ['service', undefined, 1],
      ['system', 5, 1],
      ['sysbatch', 5, 1],
    ];
    for (const [type, count, n] of cases)
      it(`${type}, count ${count}: ${n}`, () => {
        const j = job('web', { type });
        j.taskGroups[0]!.count = count;
        expect(desiredCount(j, j.taskGroups[0]!)).to.equal(n);
      });
  });

  it('everything in place: each alloc ignored', () => {
    const v = version(1);
    expect(
      run(
        v,
        [0, 1, 2].map((i) => alloc(i, v)),
      ).s,
    ).to.deep.equal({ ...none, desired: { ignore: 3 } });
  });

  it('count 0 stops every alloc not stopped already', () => {
    const v = version(1, { count: 0 });
    const { s } = run(v, [alloc(0, v), alloc(1, v), alloc(2, v, { desiredStatus: 'stop' })]);
    expect(s).to.deep.equal({
      ...none,
      desired: { stop: 2 },
      stop: ['web.g[0] alloc not needed due to job update', 'web.g[1] alloc not needed due to job update'],
    });
  });

  it('a count down stops the highest indexes', () => {
    const v = version(1, { count: 1 });
    const { s } = run(v, [alloc(0, v), alloc(1, v), alloc(2, v)]);
    expect(s).to.deep.equal({
      ...none,
      desired: { stop: 2, ignore: 1 },
      stop: ['web.g[1] alloc not needed due to job update', 'web.g[2] alloc not needed due to job update'],
    });
  });

  it('a count down stops migrating allocs first', () => {
    const v = version(1, { count: 1 });
    const { s } = run(v, [alloc(0, v), alloc(1, v, { desiredTransition: { migrate: true } })]);
    expect(s).to.deep.equal({ ...none, desired: { stop: 1, ignore: 1 }, stop: ['web.g[1] alloc not needed due to job update'] });
  });

  it('a count down does not count allocs on a disconnected client (unknown)', () => {
    const v = version(1, { count: 2 });
    const { s } = run(v, [alloc(0, v), alloc(1, v), alloc(2, v, { clientStatus: 'unknown' })]);
    expect(s.stop).to.deep.equal([]);
  });

  it('a count up places the missing names', () => {
    const v = version(1, { count: 3 });
    const { r, s } = run(v, [alloc(1, v)]);
    expect(s).to.deep.equal({ ...none, desired: { place: 2, ignore: 1 }, missing: 2 });
    expect([r.missing!.nextName(), r.missing!.nextName()]).to.deep.equal(['web.g[0]', 'web.g[2]']);
  });

  describe('failed allocs (service)', () => {
    it('eligible now: replaced under the same name, the failed one stopped when placed', () => {
      const v = version(1, { count: 2 });
      const { s } = run(v, [alloc(0, v), alloc(1, v, { clientStatus: 'failed' })]);
      expect(s).to.deep.equal({
        ...none,
        desired: { place: 1, rescheduleNow: 1, ignore: 1 },
        place: ['web.g[1] reschedule (alloc was rescheduled because it failed)'],
      });
    });

    it('within the 1 s window counts as now', () => {
      const v = version(1, { count: 1, delayMs: 6_000 }); // failed 5 s ago: due in 1 s
      expect(run(v, [alloc(0, v, { clientStatus: 'failed' })]).s.desired).to.deep.equal({ place: 1, rescheduleNow: 1 });
    });

    it('later: it keeps its place and gets a follow-up time', () => {
      const v = version(1, { count: 1, delayMs: 30_000 });
      expect(run(v, [alloc(0, v, { clientStatus: 'failed' })]).s).to.deep.equal({
        ...none,
        desired: { rescheduleLater: 1, ignore: 1 },
        later: ['web.g[0] at +25000'],
      });
    });

    it('later, with its follow-up eval already made: no second one', () => {
      const v = version(1, { count: 1, delayMs: 30_000 });
      expect(run(v, [alloc(0, v, { clientStatus: 'failed', followupEvalId: 'other' })]).s).to.deep.equal({ ...none, desired: { ignore: 1 } });
    });

    it('later, processed by its own follow-up eval: now', () => {
      const v = version(1, { count: 1, delayMs: 30_000 });
      expect(run(v, [alloc(0, v, { clientStatus: 'failed', followupEvalId: 'eval-1' })]).s.desired).to.deep.equal({ place: 1, rescheduleNow: 1 });
    });

    it('already replaced: left alone', () => {
      const v = version(1, { count: 1 });
      const old = alloc(0, v, { clientStatus: 'failed', id: 'old' });
      expect(run(v, [old, alloc(0, v, { previousAllocation: 'old' })]).s).to.deep.equal({ ...none, desired: { ignore: 1 } });
    });

    it('forced (-force-reschedule): now, whatever the policy', () => {
      const v = version(1, { count: 1, delayMs: 3_600_000 });
      expect(run(v, [alloc(0, v, { clientStatus: 'failed', desiredTransition: { forceReschedule: true } })]).s.desired).to.deep.equal({
        place: 1,
        rescheduleNow: 1,
      });
    });
  });

  it('service: complete and lost allocs are ignored and replaced', () => {
    const v = version(1, { count: 2 });
    expect(run(v, [alloc(0, v, { clientStatus: 'complete' }), alloc(1, v, { clientStatus: 'lost' })]).s).to.deep.equal({
      ...none,
      desired: { ignore: 2, place: 2 },
      missing: 2,
    });
  });

  it('service: stopped allocs are ignored and replaced', () => {
    const v = version(1, { count: 1 });
    expect(run(v, [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'complete' })]).s).to.deep.equal({ ...none, desired: { place: 1 }, missing: 1 });
  });

  describe('batch', () => {
    const b = (over: Parameters<typeof version>[1] = {}) => version(1, { type: 'batch', count: 1, ...over });
    const cases: Array<[string, (v: Job) => Allocation[], object]> = [
      ['a complete alloc still counts: nothing placed', (v) => [alloc(0, v, { clientStatus: 'complete' })], { ignore: 1 }],
      ['stopped after running successfully: still counts', (v) => [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'complete' })], { ignore: 1 }],
      [
        'stopped after all tasks exited 0 (client not yet complete): still counts',
        (v) => [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'running', taskStates: { t: { state: 'dead', failed: false, restarts: 0, events: [] } } })],
        { ignore: 1 },
      ],
      [
        'stopped with a failed task: ignored, placed again',
        (v) => [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'running', taskStates: { t: { state: 'dead', failed: true, restarts: 0, events: [] } } })],
        { ignore: 1, place: 1 },
      ],
      [
        'stopped with a task still running: ignored, placed again',
        (v) => [
          alloc(0, v, { desiredStatus: 'stop', clientStatus: 'running', taskStates: { t: { state: 'running', failed: false, restarts: 0, events: [] } } }),
        ],
        { ignore: 1, place: 1 },
      ],
      ['stopped with no task states: ignored, placed again', (v) => [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'running' })], { ignore: 1, place: 1 }],
      ['evicted: ignored, placed again', (v) => [alloc(0, v, { desiredStatus: 'evict', clientStatus: 'complete' })], { ignore: 1, place: 1 }],
      ['failed: rescheduled', (v) => [alloc(0, v, { clientStatus: 'failed' })], { place: 1, rescheduleNow: 1 }],
      [
        'an older version’s complete alloc does not count',
        () => [alloc(0, version(0, { type: 'batch', count: 1 }), { clientStatus: 'complete' })],
        { ignore: 1, place: 1 },
      ],
      ['an older version’s running alloc is updated in place', () => [alloc(0, version(0, { type: 'batch', count: 1 }))], { inPlaceUpdate: 1 }],
      [
        'a stopped alloc marked for reschedule is checked, not counted as done',
        (v) => [alloc(0, v, { desiredStatus: 'stop', clientStatus: 'failed', desiredTransition: { reschedule: true } })],
        { place: 1 },
      ],
    ];
    for (const [name, allocs, desired] of cases)
      it(name, () => {
        const v = b();
        expect(run(v, allocs(v)).s.desired).to.deep.equal(desired);
      });
  });

  it('a migrating alloc is replaced under its name and stopped when the new one is placed', () => {
    const v = version(1, { count: 2 });
    expect(run(v, [alloc(0, v), alloc(1, v, { desiredTransition: { migrate: true } })]).s).to.deep.equal({
      ...none,
      desired: { ignore: 1, migrate: 1 },
      place: ['web.g[1] (alloc is being migrated)'],
    });
  });

  describe('a new job version', () => {
    const old = version(1, { config: '/bin/old' });
    it('a change nothing sees: every alloc updated in place', () => {
      const v = version(2, { config: '/bin/old' });
      expect(
        run(
          v,
          [0, 1, 2].map((i) => alloc(i, old)),
        ).s,
      ).to.deep.equal({ ...none, desired: { inPlaceUpdate: 3 }, inPlace: ['web.g[0]', 'web.g[1]', 'web.g[2]'] });
    });

    it('a node outside the job’s datacenters: destructive even so', () => {
      const v = version(2, { config: '/bin/old' });
      expect(run(v, [alloc(0, old)], { nodeEligible: false }).s.destructive).to.deep.equal(['web.g[0] (alloc is being updated due to job update)']);
    });

    it('no update block: every alloc replaced at once', () => {
      const v = version(2, { config: '/bin/new' });
      const { r, s } = run(
        v,
        [2, 0, 1].map((i) => alloc(i, old)),
      );
      expect(s.desired).to.deep.equal({ destructiveUpdate: 3 });
      expect(s.destructive).to.deep.equal([
        'web.g[0] (alloc is being updated due to job update)',
        'web.g[1] (alloc is being updated due to job update)',
        'web.g[2] (alloc is being updated due to job update)',
      ]);
      expect(r.deployment).to.equal(undefined);
    });

    it('max_parallel 1: the lowest index first, the rest wait', () => {
      const v = version(2, { config: '/bin/new', update: update(1) });
      const { r, s } = run(
        v,
        [2, 0, 1].map((i) => alloc(i, old)),
      );
      expect(s.desired).to.deep.equal({ destructiveUpdate: 1, ignore: 2 });
      expect(s.destructive).to.deep.equal(['web.g[0] (alloc is being updated due to job update)']);
      expect(r.deployment).to.deep.equal({
        maxParallel: 1,
        desiredTotal: 3,
        replaced: 1,
        remaining: 2,
        inFlight: 0,
        failed: false,
        desiredCanaries: 0,
        promoted: false,
      });
    });

    it('max_parallel 2 with one replacement not yet healthy: one more', () => {
      const v = version(2, { config: '/bin/new', update: update(2) });
      const { r, s } = run(v, [alloc(0, v), alloc(1, old), alloc(2, old)]);
      expect(s.desired).to.deep.equal({ destructiveUpdate: 1, ignore: 2 });
      expect(r.deployment).to.include({ replaced: 1, remaining: 1, inFlight: 1, failed: false });
    });

    it('a placement takes from the budget first', () => {
      const v = version(2, { config: '/bin/new', update: update(2) });
      const { s } = run(v, [alloc(1, old), alloc(2, old)]);
      expect(s.desired).to.deep.equal({ place: 1, destructiveUpdate: 1, ignore: 1 });
    });

    it('an unhealthy replacement stops the rollout', () => {
      const v = version(2, { config: '/bin/new', update: update(2) });
      const { r, s } = run(v, [alloc(0, v, { deploymentStatus: { healthy: false } }), alloc(1, old), alloc(2, old)]);
      expect(s.desired).to.deep.equal({ ignore: 3 });
      expect(r.deployment).to.include({ replaced: 0, remaining: 2, failed: true });
    });

    it('a paused or failed rollout (held): nothing replaced, no deployment', () => {
      const v = version(2, { config: '/bin/new', update: update(2) });
      const { r, s } = run(v, [alloc(0, old), alloc(1, old)], { held: true });
      expect(s.desired).to.deep.equal({ ignore: 2, place: 1 });
      expect(r.deployment).to.equal(undefined);
    });

    it('a first run with an update block makes a deployment', () => {
      const v = version(0, { update: update(1) });
      expect(run(v, []).r.deployment).to.deep.equal({
        maxParallel: 1,
        desiredTotal: 3,
        replaced: 0,
        remaining: 0,
        inFlight: 0,
        failed: false,
        desiredCanaries: 0,
        promoted: false,
      });
    });

    it('a reschedule alone under a running version makes none', () => {
      const v = version(1, { update: update(1), count: 2 });
      expect(run(v, [alloc(0, v), alloc(1, v, { clientStatus: 'failed' })]).r.deployment).to.equal(undefined);
    });

    it('an alloc of another group at this version is no running version of this one', () => {
      const v = version(1, { update: update(1), count: 1 });
      const other = { ...alloc(0, v), taskGroup: 'h' } as Allocation;
      expect(run(v, [], { all: [other] }).r.deployment).to.not.equal(undefined);
    });

    it('versions unknown: compared by the job itself', () => {
      const v = { ...version(1), version: undefined } as unknown as Job;
      const same = alloc(0, v, { jobVersion: undefined });
      const changedJob = { ...v, priority: 70 } as Job;
      expect([run(v, [same]).s.desired, run(changedJob, [same]).s.desired]).to.deep.equal([
        { ignore: 1, place: 2 },
        { inPlaceUpdate: 1, place: 2 },
      ]);
    });

    it('an alloc without its own version is of its job’s', () => {
      const a = alloc(0, old, { jobVersion: undefined });
      expect(run(version(1, { config: '/bin/old' }), [a]).s.desired).to.deep.equal({ ignore: 1, place: 2 });
    });
  });

  describe('canaries', () => {
    const old = version(1, { config: '/bin/old' });
    const v = version(2, { config: '/bin/new', update: update(1, 1) });

    it('a destructive change with canary 1: one canary under the lowest name, nothing replaced', () => {
      const { r, s } = run(
        v,
        [2, 1, 0].map((i) => alloc(i, old)),
      );
      expect(s).to.deep.equal({ ...none, desired: { canary: 1, ignore: 3 }, canaries: ['web.g[0]'] });
      expect(r.deployment).to.include({ desiredCanaries: 1, promoted: false, replaced: 0, remaining: 3 });
    });

    it('the canary placed, not promoted: it counts for nothing, nothing more placed', () => {
      const canary = alloc(0, v, { id: 'c1', deploymentStatus: { canary: true } });
      const { s } = run(v, [alloc(0, old), alloc(1, old), alloc(2, old), canary], {
        canaries: { desiredCanaries: 1, placedCanaries: ['c1'], promoted: false },
      });
      expect(s).to.deep.equal({ ...none, desired: { ignore: 3 } });
    });

    it('promoted: the old alloc under the canary’s name stops, the rest roll', () => {
      const canary = alloc(0, v, { id: 'c1', deploymentStatus: { canary: true, healthy: true } });
      const { s } = run(v, [alloc(0, old), alloc(1, old), alloc(2, old), canary], { canaries: { desiredCanaries: 1, placedCanaries: ['c1'], promoted: true } });
      expect(s.stop).to.deep.equal(['web.g[0] alloc not needed due to job update']);
      expect(s.destructive).to.deep.equal(['web.g[1] (alloc is being updated due to job update)']);
      expect(s.desired).to.deep.equal({ stop: 1, ignore: 2, destructiveUpdate: 1 });
    });

    it('a canary of an older version stops', () => {
      const stale = alloc(3, old, { deploymentStatus: { canary: true } });
      const cur = version(1, { config: '/bin/old' });
      expect(run(cur, [alloc(0, cur), alloc(1, cur), alloc(2, cur), stale]).s.stop).to.deep.equal(['web.g[3] alloc not needed due to job update']);
    });

    it('a failed deployment’s canaries stop, and nothing is replaced', () => {
      const canary = alloc(0, v, { id: 'c1', deploymentStatus: { canary: true } });
      const { r, s } = run(v, [alloc(0, old), alloc(1, old), alloc(2, old), canary], {
        canaries: { desiredCanaries: 1, placedCanaries: ['c1'], promoted: false, failed: true },
      });
      expect(s.stop).to.deep.equal(['web.g[0] alloc not needed due to job update']);
      expect(s.desired).to.deep.equal({ stop: 1, ignore: 3 });
      expect(r.deployment).to.equal(undefined);
    });
  });
});
