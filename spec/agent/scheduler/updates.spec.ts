import { expect } from 'chai';
import type { Job } from '../../../index.ts';
import { destructiveChange, newEvaluation } from '../../../agent/scheduler/index.ts';
import { job, updateStrategy, World } from './support.ts';

const update = (maxParallel: number) => updateStrategy({ maxParallel, canary: 0, healthCheck: 'checks', minHealthyTimeMs: 10_000 });

/** Change one thing of job `web` (version 1). */
function changed(fn: (j: Job) => void): Job {
  const j = structuredClone(job('web', { count: 2, version: 1 }));
  fn(j);
  return j;
}

describe('scheduler: job updates', () => {
  describe('destructive or in place (Nomad’s tasksUpdated)', () => {
    const t = (j: Job) => j.taskGroups[0].tasks[0];
    const cases: Array<{ name: string; change: (j: Job) => void; destructive?: string }> = [
      { name: 'task config', change: (j) => (t(j).config = { command: '/bin/true' }), destructive: 'task config' },
      { name: 'task env', change: (j) => (t(j).env = { A: '1' }), destructive: 'task env' },
      { name: 'task driver', change: (j) => (t(j).driver = 'exec'), destructive: 'task driver' },
      { name: 'task user', change: (j) => (t(j).user = 'nobody'), destructive: 'task user' },
      { name: 'task cpu', change: (j) => (t(j).resources = { ...t(j).resources, cpu: 101 }), destructive: 'task cpu' },
      { name: 'task memory', change: (j) => (t(j).resources = { ...t(j).resources, memoryMB: 101 }), destructive: 'task memory' },
      { name: 'task cores', change: (j) => (t(j).resources = { ...t(j).resources, cores: 1 }), destructive: 'task cores' },
      { name: 'task artifacts', change: (j) => (t(j).artifacts = [{ source: 'https://example.com/a.tgz' }]), destructive: 'task artifacts' },
      { name: 'job meta (reaches the task as NOMAD_META_*)', change: (j) => (j.meta = { a: 'b' }), destructive: 'task meta' },
      { name: 'task added', change: (j) => j.taskGroups[0].tasks.push({ ...t(j), name: 'u' }), destructive: 'number of tasks' },
      { name: 'ephemeral disk', change: (j) => (j.taskGroups[0].ephemeralDisk = { sizeMB: 500 }), destructive: 'ephemeral disk' },
      {
        name: 'network',
        change: (j) => (j.taskGroups[0].networks = [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }]),
        destructive: 'network',
      },
      { name: 'count', change: (j) => (j.taskGroups[0].count = 3) },
      { name: 'priority', change: (j) => (j.priority = 70) },
      { name: 'kill timeout', change: (j) => (t(j).killTimeoutMs = 30_000) },
      { name: 'restart policy', change: (j) => (j.taskGroups[0].restartPolicy = { attempts: 1, intervalMs: 1000, delayMs: 10, mode: 'fail' }) },
      { name: 'group shutdown delay', change: (j) => (j.taskGroups[0].shutdownDelayMs = 5000) },
      { name: 'services', change: (j) => (j.taskGroups[0].services = [{ name: 'web', tags: ['v2'] }]) },
      { name: 'update block', change: (j) => (j.taskGroups[0].update = update(1)) },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.destructive ? 'destructive' : 'in place'}`, () => {
        const before = job('web', { count: 2, version: 0 });
        expect(destructiveChange(before, changed(c.change), 'g')).to.equal(c.destructive);
        const w = new World();
        const old = w.register(before).place;
        const plan = w.register(changed(c.change));
        if (c.destructive) {
          expect(plan.inPlace).to.have.length(0);
          expect(plan.stop.map((a) => [a.id, a.desiredDescription])).to.deep.equal(old.map((a) => [a.id, 'alloc is being updated due to job update']));
          expect(plan.place.map((a) => [a.name, a.previousAllocation, a.jobVersion])).to.deep.equal(old.map((a) => [a.name, a.id, 1]));
        } else {
          expect(plan.stop).to.have.length(0);
          expect(plan.inPlace.map((a) => [a.id, a.jobVersion, a.allocatedResources])).to.deep.equal(old.map((a) => [a.id, 1, a.allocatedResources]));
          expect(plan.inPlace.every((a) => a.job.version === 1)).to.equal(true);
        }
      });
    }
    it('the same version again changes nothing', () => {
      const w = new World();
      w.register(job('web', { count: 2 }));
      const plan = w.register(job('web', { count: 2 }));
      expect([plan.place, plan.stop, plan.inPlace]).to.deep.equal([[], [], []]);
      expect(plan.desiredTgUpdates.g.ignore).to.equal(2);
    });
    it('destructive: driver, user, config, env, artifacts, meta, resources, tasks, disk, network; in place: the rest', () => {
      const g = (j: Job) => j.taskGroups[0]!;
      const r = (j: Job) => t(j).resources!;
      const destructive: Array<(j: Job) => void> = [
        (j) => (t(j).driver = 'exec'),
        (j) => (t(j).user = 'nobody'),
        (j) => (t(j).config = { command: '/bin/true' }),
        (j) => (t(j).env = { A: '1' }),
        (j) => (t(j).artifacts = [{ source: 'https://example.com/a.tgz' }]),
        (j) => (j.meta = { a: 'b' }),
        (j) => (g(j).meta = { a: 'b' }),
        (j) => (t(j).meta = { a: 'b' }),
        (j) => (r(j).cpu = 101),
        (j) => (r(j).cores = 1),
        (j) => (r(j).memoryMB = 101),
        (j) => (r(j).memoryMaxMB = 500),
        (j) => (r(j).secretsMB = 2),
        (j) => g(j).tasks.push({ ...t(j), name: 'u' }),
        (j) => (g(j).ephemeralDisk = { sizeMB: 500 }),
        (j) => (g(j).networks = [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }]),
      ];
      const inPlace: Array<(j: Job) => void> = [
        (j) => (g(j).count = 3),
        (j) => (j.priority = 70),
        (j) => (g(j).restartPolicy = { attempts: 1, intervalMs: 1000, delayMs: 10, mode: 'fail' }),
        (j) => (g(j).reschedulePolicy = { attempts: 1, intervalMs: 1000, delayMs: 10, delayFunction: 'constant', maxDelayMs: 10, unlimited: false }),
        (j) => (g(j).update = update(1)),
        (j) => (g(j).migrate = { maxParallel: 2, healthCheck: 'checks', minHealthyTimeMs: 0, healthyDeadlineMs: 0 }),
        (j) => (g(j).services = [{ name: 'web', tags: ['v2'] }]),
        (j) => (t(j).killTimeoutMs = 30_000),
        (j) => (g(j).shutdownDelayMs = 5000),
        (j) => (t(j).shutdownDelayMs = 5000),
      ];
      const before = job('web', { count: 2 });
      expect(destructive.map((c) => typeof destructiveChange(before, changed(c), 'g'))).to.deep.equal(destructive.map(() => 'string'));
      expect(inPlace.map((c) => destructiveChange(before, changed(c), 'g'))).to.deep.equal(inPlace.map(() => undefined));
    });
  });

  describe('count changes', () => {
    const cases = [
      { from: 5, to: 2, stopped: ['web.g[2]', 'web.g[3]', 'web.g[4]'], placed: [] as string[] },
      { from: 2, to: 4, stopped: [] as string[], placed: ['web.g[2]', 'web.g[3]'] },
      { from: 3, to: 0, stopped: ['web.g[0]', 'web.g[1]', 'web.g[2]'], placed: [] as string[] },
    ];
    for (const c of cases) {
      it(`count ${c.from} → ${c.to}: stops the highest indexes, places new ones, keeps the rest in place`, () => {
        const w = new World();
        w.register(job('web', { count: c.from }));
        const plan = w.register(job('web', { count: c.to, version: 1 }));
        expect(plan.stop.map((a) => a.name).sort()).to.deep.equal(c.stopped);
        expect(plan.stop.every((a) => a.desiredStatus === 'stop' && a.desiredDescription === 'alloc not needed due to job update')).to.equal(true);
        expect(plan.place.map((a) => a.name)).to.deep.equal(c.placed);
        expect(plan.inPlace).to.have.length(Math.min(c.from, c.to));
      });
    }
  });

  describe('update { max_parallel }: at most that many replaced per batch', () => {
    it('3 allocs, max_parallel 1: one at a time, each batch after the previous is healthy', () => {
      const w = new World();
      const v0 = w.register(job('web', { count: 3, group: { update: update(1) } })).place;
      const v1 = job('web', { count: 3, version: 1, group: { update: update(1) } });
      v1.taskGroups[0].tasks[0].env = { V: '1' };
      const first = w.register(v1);
      expect(first.place.map((a) => [a.name, a.previousAllocation])).to.deep.equal([['web.g[0]', v0[0].id]]);
      expect(first.stop.map((a) => a.id)).to.deep.equal([v0[0].id]);
      expect(first.deployment.g).to.deep.equal({
        maxParallel: 1,
        desiredTotal: 3,
        replaced: 1,
        remaining: 2,
        inFlight: 0,
        failed: false,
        desiredCanaries: 0,
        promoted: false,
      });
      // Not healthy yet: the deployment watcher's next eval replaces nothing.
      const wait = w.evaluate('web', 'deployment-watcher');
      expect(wait.place).to.have.length(0);
      expect(wait.deployment.g).to.include({ replaced: 0, remaining: 2, inFlight: 1 });
      // Healthy: the next batch goes.
      const a = w.allocs.get(first.place[0].id)!;
      w.allocs.set(a.id, { ...a, clientStatus: 'running', deploymentStatus: { healthy: true, timestamp: w.now } });
      const second = w.evaluate('web', 'deployment-watcher');
      expect(second.place.map((x) => x.name)).to.deep.equal(['web.g[1]']);
      const b = w.allocs.get(second.place[0].id)!;
      w.allocs.set(b.id, { ...b, clientStatus: 'running', deploymentStatus: { healthy: true, timestamp: w.now } });
      const third = w.evaluate('web', 'deployment-watcher');
      expect(third.place.map((x) => x.name)).to.deep.equal(['web.g[2]']);
      expect(third.deployment.g).to.include({ remaining: 0 });
    });
    it('issue #35: version 0 of a group with an update block gets a deployment too, every alloc placed at once', () => {
      const w = new World();
      const v0 = w.register(job('web', { count: 3, group: { update: update(1) } }));
      expect(v0.place).to.have.length(3);
      expect(v0.deployment.g).to.deep.equal({
        maxParallel: 1,
        desiredTotal: 3,
        replaced: 0,
        remaining: 0,
        inFlight: 0,
        failed: false,
        desiredCanaries: 0,
        promoted: false,
      });
      // Once its allocs are placed, another evaluation of the same version makes none (Nomad's hadRunning).
      expect(w.evaluate('web', 'deployment-watcher').deployment).to.deep.equal({});
      // A count change is an in-place update of the new version: tracked again.
      expect(w.register(job('web', { count: 4, version: 1, group: { update: update(1) } })).deployment.g).to.include({ desiredTotal: 4 });
      // Without an update block, or for a batch job, there is none.
      expect(new World().register(job('plain', { count: 2 })).deployment).to.deep.equal({});
      expect(new World().register(job('b', { type: 'batch', count: 2, group: { update: update(1) } })).deployment).to.deep.equal({});
    });
    it('an unhealthy replacement stops the rollout', () => {
      const w = new World();
      w.register(job('web', { count: 3, group: { update: update(2) } }));
      const v1 = job('web', { count: 3, version: 1, group: { update: update(2) } });
      v1.taskGroups[0].tasks[0].env = { V: '1' };
      const first = w.register(v1);
      expect(first.place).to.have.length(2);
      const a = w.allocs.get(first.place[0].id)!;
      w.allocs.set(a.id, { ...a, deploymentStatus: { healthy: false, timestamp: w.now } });
      const next = w.evaluate('web', 'deployment-watcher');
      expect(next.place).to.have.length(0);
      expect(next.deployment.g).to.include({ failed: true, remaining: 1 });
    });
    it('a rollout the operator paused or failed (heldRollouts) places no replacement until released', () => {
      const w = new World();
      w.register(job('web', { count: 3, group: { update: update(1) } }));
      const v1 = job('web', { count: 3, version: 1, group: { update: update(1) } });
      v1.taskGroups[0].tasks[0].env = { V: '1' };
      const first = w.register(v1);
      const a = w.allocs.get(first.place[0]!.id)!;
      w.allocs.set(a.id, { ...a, clientStatus: 'running', deploymentStatus: { healthy: true, timestamp: w.now } });
      const ev = () => newEvaluation({ id: w.newId(), job: v1, triggeredBy: 'deployment-watcher', now: w.now });
      const held = w.process(ev(), { heldRollouts: ['web@1'] });
      expect([held.place.length, held.stop.length, held.deployment]).to.deep.equal([0, 0, {}]);
      // another job version's hold changes nothing here
      expect(w.process(ev(), { heldRollouts: ['web@0', 'other@1'] }).place.map((x) => x.name)).to.deep.equal(['web.g[1]']);
    });
    it('without an update block every alloc is replaced at once', () => {
      const w = new World();
      w.register(job('web', { count: 3 }));
      const v1 = job('web', { count: 3, version: 1 });
      v1.taskGroups[0].tasks[0].env = { V: '1' };
      expect(w.register(v1).place).to.have.length(3);
    });
    it('a failed rollout still reschedules a failed alloc, and replaces nothing more', () => {
      const reschedulePolicy = { attempts: 0, intervalMs: 0, delayMs: 0, delayFunction: 'constant' as const, maxDelayMs: 0, unlimited: true };
      const w = new World();
      const v0 = w.register(job('web', { count: 3, group: { update: update(1), reschedulePolicy } })).place;
      const v1 = job('web', { count: 3, version: 1, group: { update: update(1), reschedulePolicy } });
      v1.taskGroups[0].tasks[0].env = { V: '1' };
      const [first] = w.register(v1).place;
      w.allocs.set(first.id, { ...w.allocs.get(first.id)!, deploymentStatus: { healthy: false, timestamp: w.now } });
      w.client(v0[2].id, 'failed');
      const plan = w.evaluate('web', 'alloc-failure');
      expect(plan.deployment.g).to.include({ failed: true });
      expect(plan.place.map((a) => [a.name, a.previousAllocation])).to.deep.equal([['web.g[2]', v0[2].id]]);
      expect(w.running('web').find((a) => a.name === 'web.g[1]')!.id).to.equal(v0[1].id);
    });
  });

  describe('job stop and purge', () => {
    for (const how of ['stop', 'purge'] as const) {
      it(`${how}: desired stop for every alloc of the job, nothing placed`, () => {
        const w = new World();
        w.register(job('web', { count: 2 }));
        w.register(job('other'));
        if (how === 'stop') w.jobs = w.jobs.map((j) => (j.id === 'web' ? { ...j, stop: true } : j));
        else w.jobs = w.jobs.filter((j) => j.id !== 'web');
        const plan = w.evaluate('web', 'job-deregister');
        expect(plan.stop.map((a) => a.name).sort()).to.deep.equal(['web.g[0]', 'web.g[1]']);
        expect(plan.stop.every((a) => a.desiredStatus === 'stop' && a.desiredDescription === 'alloc not needed due to job update')).to.equal(true);
        expect(plan.place).to.have.length(0);
        expect(plan.eval).to.include({ status: 'complete', triggeredBy: 'job-deregister' });
        expect(w.running('other')).to.have.length(1);
      });
    }
    it('a group removed from the job is stopped', () => {
      const w = new World();
      const j = job('web');
      j.taskGroups.push({ ...j.taskGroups[0], name: 'h' });
      w.register(j);
      const plan = w.register({ ...job('web', { version: 1 }) });
      expect(plan.stop.map((a) => a.name)).to.deep.equal(['web.h[0]']);
    });
  });
});
