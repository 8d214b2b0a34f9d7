/**
 * Canaries in the pure reconciler (Nomad's `isCanarying`): a job update of a group with
 * `update { canary = N }` places N allocs of the new version beside the old ones and replaces
 * nothing until the deployment is promoted; after promotion the old allocs whose names the
 * canaries took stop, and the rest are replaced `max_parallel` at a time.
 */
import { expect } from 'chai';
import type { Allocation, Job } from '../../../index.ts';
import { newEvaluation, type CanaryState, type Plan } from '../../../agent/scheduler/index.ts';
import { job, updateStrategy, World } from './support.ts';

const update = (canary: number, maxParallel = 1) => updateStrategy({ maxParallel, canary, healthCheck: 'task_states', minHealthyTimeMs: 100 });

function version(v: number, canary: number, count = 3): Job {
  const j = job('web', { count, version: v, group: { update: update(canary) } });
  j.taskGroups[0]!.tasks[0]!.env = { V: String(v) };
  return j;
}

/** Runs `plan`'s placements healthy (the client's health verdict). */
function healthy(w: World, plan: Plan): void {
  for (const p of plan.place) {
    const a = w.allocs.get(p.id)!;
    w.allocs.set(a.id, { ...a, clientStatus: 'running', deploymentStatus: { ...a.deploymentStatus, healthy: true, timestamp: w.now } });
  }
}

/** One deployment-watcher evaluation of `j` with the deployment's canary state. */
function watch(w: World, j: Job, canaries: CanaryState): Plan {
  const ev = newEvaluation({ id: w.newId(), job: j, triggeredBy: 'deployment-watcher', now: w.now });
  return w.process(ev, { canaries: { [`web@${j.version}`]: { g: canaries } } });
}

const live = (w: World, v: number): Allocation[] => w.running('web').filter((a) => a.jobVersion === v);

describe('scheduler: canaries', () => {
  it('version 0 places no canaries, whatever update.canary says', () => {
    const w = new World();
    const v0 = w.register(version(0, 1));
    expect(v0.place).to.have.length(3);
    expect(v0.place.every((a) => a.deploymentStatus === undefined)).to.equal(true);
    expect(v0.desiredTgUpdates.g!.canary).to.equal(0);
    expect(v0.deployment.g).to.include({ desiredCanaries: 0 });
  });

  it('an update places the canaries beside the old allocs, replacing nothing until promoted', () => {
    const w = new World();
    healthy(w, w.register(version(0, 2)));
    const v1 = version(1, 2);
    const first = w.register(v1);
    expect(first.stop).to.deep.equal([]);
    expect(first.place.map((a) => [a.name, a.previousAllocation, a.deploymentStatus])).to.deep.equal([
      ['web.g[0]', undefined, { canary: true }],
      ['web.g[1]', undefined, { canary: true }],
    ]);
    expect(first.desiredTgUpdates.g).to.include({ canary: 2, destructiveUpdate: 0, stop: 0, place: 0 });
    expect(first.deployment.g).to.include({ desiredCanaries: 2, promoted: false, desiredTotal: 3 });
    expect(live(w, 0)).to.have.length(3);
    const state: CanaryState = { desiredCanaries: 2, placedCanaries: first.place.map((a) => a.id), promoted: false };

    // Healthy canaries, not promoted: the next evaluations place and stop nothing.
    healthy(w, first);
    const wait = watch(w, v1, state);
    expect([wait.place.length, wait.stop.length]).to.deep.equal([0, 0]);
    expect(live(w, 0)).to.have.length(3);
    expect(live(w, 1)).to.have.length(2);

    // Promoted: the old allocs the canaries took the names of stop; the third is replaced.
    const promoted = watch(w, v1, { ...state, promoted: true });
    expect(promoted.stop.map((a) => [a.name, a.desiredDescription]).sort()).to.deep.equal([
      ['web.g[0]', 'alloc not needed due to job update'],
      ['web.g[1]', 'alloc not needed due to job update'],
      ['web.g[2]', 'alloc is being updated due to job update'],
    ]);
    expect(promoted.place.map((a) => [a.name, a.deploymentStatus])).to.deep.equal([['web.g[2]', undefined]]);
    expect(live(w, 0)).to.have.length(0);
    expect(live(w, 1).map((a) => a.name)).to.deep.equal(['web.g[0]', 'web.g[1]', 'web.g[2]']);
  });

  it('after promotion the rest go max_parallel at a time', () => {
    const w = new World();
    healthy(w, w.register(version(0, 1, 4)));
    const v1 = version(1, 1, 4);
    const first = w.register(v1);
    expect(first.place).to.have.length(1);
    healthy(w, first);
    const state: CanaryState = { desiredCanaries: 1, placedCanaries: [first.place[0]!.id], promoted: true };
    const second = watch(w, v1, state);
    expect(second.place.map((a) => a.name)).to.deep.equal(['web.g[1]']);
    expect(watch(w, v1, state).place).to.have.length(0);
    healthy(w, second);
    expect(watch(w, v1, state).place.map((a) => a.name)).to.deep.equal(['web.g[2]']);
  });

  it('a paused or failed rollout, or an unhealthy canary, places no further canary', () => {
    const w = new World();
    healthy(w, w.register(version(0, 2)));
    const v1 = version(1, 2);
    const ev = () => newEvaluation({ id: w.newId(), job: v1, triggeredBy: 'job-register', now: w.now });
    w.jobs = [v1];
    const held = w.process(ev(), { heldRollouts: ['web@1'] });
    expect(held.place).to.have.length(0);
    const first = w.process(ev());
    expect(first.place).to.have.length(2);
    const gone = first.place[1]!;
    const a = w.allocs.get(first.place[0]!.id)!;
    w.allocs.set(a.id, { ...a, deploymentStatus: { canary: true, healthy: false, timestamp: w.now } });
    // The second canary is lost: with the first unhealthy none replaces it.
    w.allocs.set(gone.id, { ...w.allocs.get(gone.id)!, desiredStatus: 'stop' });
    const after = watch(w, v1, { desiredCanaries: 2, placedCanaries: first.place.map((x) => x.id), promoted: false });
    expect(after.place).to.have.length(0);
    expect(after.deployment.g).to.include({ failed: true });
  });

  it('an in-place change places no canaries', () => {
    const w = new World();
    healthy(w, w.register(version(0, 1)));
    const v1 = job('web', { count: 3, version: 1, group: { update: update(1) } });
    v1.taskGroups[0]!.tasks[0]!.env = { V: '0' };
    v1.priority = 70;
    const plan = w.register(v1);
    expect([plan.place.length, plan.inPlace.length, plan.desiredTgUpdates.g!.canary]).to.deep.equal([0, 3, 0]);
  });

  it("canaries never promoted stop: a failed deployment's, and an older version's when a newer one comes", () => {
    const w = new World();
    healthy(w, w.register(version(0, 1)));
    const v1 = version(1, 1);
    const first = w.register(v1);
    const id = first.place[0]!.id;
    const failed = watch(w, v1, { desiredCanaries: 1, placedCanaries: [id], promoted: false, failed: true });
    expect(failed.stop.map((a) => [a.id, a.desiredDescription])).to.deep.equal([[id, 'alloc not needed due to job update']]);
    expect([failed.place.length, live(w, 0).length]).to.deep.equal([0, 3]);

    const w2 = new World();
    healthy(w2, w2.register(version(0, 1)));
    const c1 = w2.register(version(1, 1)).place[0]!.id;
    const v2 = w2.register(version(2, 1));
    expect(v2.stop.map((a) => a.id)).to.deep.equal([c1]);
    expect(v2.place.map((a) => [a.jobVersion, a.deploymentStatus?.canary])).to.deep.equal([[2, true]]);
  });
});
