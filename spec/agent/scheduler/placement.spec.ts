import { expect } from 'chai';
import { blockedEvalsToRetry, schedule, SchedulerInputError, newEvaluation, supersededBlockedEvals } from '../../../agent/scheduler/index.ts';
import type { Allocation } from '../../../index.ts';
import { job, node, preemption, World } from './support.ts';

describe('scheduler: placement', () => {
  it('places count allocs named <job>.<group>[<index>] with their allocated resources', () => {
    const w = new World();
    const plan = w.register(job('web', { count: 3, cpu: 250, memoryMB: 128 }));
    expect(plan.place.map((a) => a.name)).to.deep.equal(['web.g[0]', 'web.g[1]', 'web.g[2]']);
    for (const a of plan.place) {
      expect(a).to.include({
        jobId: 'web',
        taskGroup: 'g',
        nodeId: 'node-1',
        desiredStatus: 'run',
        clientStatus: 'pending',
        evalId: plan.eval.id,
        jobVersion: 0,
      });
      expect(a.allocatedResources).to.deep.equal({ tasks: { t: { cpu: 250, memoryMB: 128 } }, shared: { diskMB: 300, ports: [] } });
    }
    expect(new Set(plan.place.map((a) => a.id)).size).to.equal(3);
    expect(plan.eval).to.include({ status: 'complete' });
    expect(plan.eval.queuedAllocations).to.deep.equal({ g: 0 });
    expect(plan.evals).to.deep.equal([]);
    expect(plan.desiredTgUpdates.g).to.include({ place: 3, stop: 0 });
  });

  describe('each dimension is checked (node 3000 MHz, 3072 MB, 10000 MB disk, 4 cores; reserved as given)', () => {
    const cases = [
      { name: 'cpu', j: { cpu: 3001 }, dim: 'cpu' },
      { name: 'memory', j: { memoryMB: 3073 }, dim: 'memory' },
      { name: 'disk', j: { group: { ephemeralDisk: { sizeMB: 10_001 } } }, dim: 'disk' },
      { name: 'cores', j: { cores: 5 }, dim: 'cores' },
      { name: 'cpu after reserved cpu', j: { cpu: 2600 }, reserved: { cpuMHz: 500 }, dim: 'cpu' },
      { name: 'memory after reserved memory', j: { memoryMB: 3000 }, reserved: { memoryMB: 100 }, dim: 'memory' },
      { name: 'disk after reserved disk', j: { group: { ephemeralDisk: { sizeMB: 9000 } } }, reserved: { diskMB: 1001 }, dim: 'disk' },
      { name: 'cores after reserved cores', j: { cores: 3 }, reserved: { cores: [0, 1] }, dim: 'cores' },
      { name: 'everything exactly fits', j: { cpu: 3000, memoryMB: 3072, group: { ephemeralDisk: { sizeMB: 10_000 } } } },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.dim ? `"${c.dim}" exhausted` : 'placed'}`, () => {
        const w = new World(node({ reserved: c.reserved }));
        const plan = w.register(job('j', c.j));
        if (!c.dim) return expect(plan.place).to.have.length(1);
        expect(plan.place).to.have.length(0);
        const { resourcesExhausted, ...metric } = plan.failedTgAllocs.g!;
        expect(resourcesExhausted).to.have.property('t');
        expect(metric).to.deep.equal({
          nodesEvaluated: 1,
          nodesFiltered: 0,
          nodesAvailable: { dc1: 1 },
          nodesExhausted: 1,
          dimensionExhausted: { [c.dim]: 1 },
          coalescedFailures: 0,
        });
      });
    }
  });

  it('cores: distinct core ids per task, cpu is cores × MHz per core; reserved cores are skipped', () => {
    const w = new World(node({ reserved: { cores: [0] } }));
    const a = w.register(job('a', { cores: 2 })).place[0];
    const b = w.register(job('b', { cores: 1 })).place[0];
    expect(a.allocatedResources!.tasks.t).to.include({ cpu: 1500 });
    expect(a.allocatedResources!.tasks.t.cores).to.deep.equal([1, 2]);
    expect(b.allocatedResources!.tasks.t.cores).to.deep.equal([3]);
    expect(w.register(job('c', { cores: 1 })).failedTgAllocs.g.dimensionExhausted).to.deep.equal({ cores: 1 });
  });

  it('secrets tmpfs counts as memory; memory_max only with memory oversubscription on', () => {
    const j = job('m');
    j.taskGroups[0].tasks[0].resources = { cpu: 100, memoryMB: 200, memoryMaxMB: 400, secretsMB: 1 };
    expect(new World().register(j).place[0].allocatedResources!.tasks.t).to.deep.equal({ cpu: 100, memoryMB: 201 });
    const over = new World(node(), {
      preemptionConfig: { serviceSchedulerEnabled: false, batchSchedulerEnabled: false, sysbatchSchedulerEnabled: false, systemSchedulerEnabled: true },
      memoryOversubscriptionEnabled: true,
    });
    expect(over.register(j).place[0].allocatedResources!.tasks.t).to.deep.equal({ cpu: 100, memoryMB: 201, memoryMaxMB: 401 });
    // memory_max = -1 (no hard limit) stays -1, as Nomad's ranker keeps MemoryNoLimit (issue #36).
    const unlimited = job('u');
    unlimited.taskGroups[0].tasks[0].resources = { cpu: 100, memoryMB: 200, memoryMaxMB: -1, secretsMB: 1 };
    expect(over.register(unlimited).place[0].allocatedResources!.tasks.t).to.deep.equal({ cpu: 100, memoryMB: 201, memoryMaxMB: -1 });
  });

  it('partial fit: what fits is placed, the rest queued with coalesced failures, in a blocked eval', () => {
    const w = new World();
    const plan = w.register(job('web', { count: 5, cpu: 1000 }));
    expect(plan.place).to.have.length(3);
    expect(plan.queued).to.deep.equal({ g: 2 });
    expect(plan.failedTgAllocs.g.coalescedFailures).to.equal(1);
    const blocked = plan.evals.find((e) => e.status === 'blocked')!;
    expect(blocked).to.include({
      triggeredBy: 'queued-allocs',
      jobId: 'web',
      previousEval: plan.eval.id,
      statusDescription: 'created to place remaining allocations',
    });
    expect(blocked.queuedAllocations).to.deep.equal({ g: 2 });
    expect(plan.eval.blockedEval).to.equal(blocked.id);
  });

  it('a blocked eval places its allocs when resources free, else stays blocked', () => {
    const w = new World();
    w.register(job('big', { cpu: 2000 }));
    const queued = w.register(job('web', { count: 2, cpu: 1000 }));
    expect(queued.queued.g).to.equal(1);
    const [blocked] = blockedEvalsToRetry([...w.evals.values()]);
    // Nothing freed yet: processing it again leaves it blocked, making no second blocked eval.
    const again = w.process(blocked);
    expect(again.eval.status).to.equal('blocked');
    expect(again.evals).to.deep.equal([]);
    // big stops (the client reports it complete): room for the queued alloc.
    const bigPlan = w.register({ ...job('big', { cpu: 2000 }), stop: true }, 'job-deregister');
    expect(bigPlan.stop.map((a) => a.desiredDescription)).to.deep.equal(['alloc not needed due to job update']);
    const placed = w.process(blockedEvalsToRetry([...w.evals.values()])[0]);
    expect(placed.eval.status).to.equal('complete');
    expect(placed.place.map((a) => a.name)).to.deep.equal(['web.g[1]']);
  });

  it('one blocked eval per job: older ones are canceled with Nomad’s text', () => {
    const w = new World();
    w.register(job('big', { cpu: 3000 }));
    const first = w.register(job('web', { cpu: 1000 })).evals[0];
    const second = w.register(job('web', { cpu: 1000, version: 1 })).evals[0];
    const canceled = supersededBlockedEvals([...w.evals.values()], second, w.now);
    expect(canceled.map((e) => e.id)).to.deep.equal([first.id]);
    expect(canceled[0]).to.include({ status: 'canceled', statusDescription: 'existing blocked evaluation exists for job "web"' });
  });

  it('indexes are reused as Nomad does: the lowest free index below count', () => {
    const w = new World();
    w.register(job('web', { count: 3 }));
    const lost = w.running('web').find((a) => a.name === 'web.g[1]')!;
    w.allocs.set(lost.id, { ...lost, desiredStatus: 'stop' });
    const plan = w.evaluate('web', 'alloc-stop');
    expect(plan.place.map((a) => a.name)).to.deep.equal(['web.g[1]']);
  });

  describe("datacenters: the node's must be one of the job's (wildcards as Nomad)", () => {
    const cases: Array<{ dcs?: string[]; placed: boolean }> = [
      { dcs: undefined, placed: true },
      { dcs: ['dc1'], placed: true },
      { dcs: ['dc*'], placed: true },
      { dcs: ['*'], placed: true },
      { dcs: ['eu-1', 'dc1'], placed: true },
      { dcs: ['dc2'], placed: false },
      { dcs: ['d.1'], placed: false },
    ];
    for (const c of cases) {
      it(`${JSON.stringify(c.dcs)} on dc1: ${c.placed ? 'placed' : 'no node evaluated, queued'}`, () => {
        const plan = new World().register({ ...job('web'), datacenters: c.dcs });
        expect(plan.place).to.have.length(c.placed ? 1 : 0);
        if (!c.placed) {
          expect(plan.failedTgAllocs.g).to.deep.equal({
            nodesEvaluated: 0,
            nodesFiltered: 0,
            nodesAvailable: {},
            nodesExhausted: 0,
            dimensionExhausted: {},
            coalescedFailures: 0,
          });
          expect(plan.queued.g).to.equal(1);
        }
      });
    }
    it('a new version that leaves the node out is not updated in place; the old alloc keeps running', () => {
      const w = new World();
      const [a] = w.register(job('web')).place;
      const plan = w.register({ ...job('web', { version: 1 }), datacenters: ['dc2'] });
      expect(plan.inPlace).to.have.length(0);
      expect(plan.stop).to.have.length(0);
      expect(plan.queued.g).to.equal(1);
      expect(w.running('web').map((x) => x.id)).to.deep.equal([a.id]);
    });
  });

  it('system and sysbatch jobs run one alloc per group on the node', () => {
    const w = new World();
    expect(w.register(job('sys', { type: 'system', count: 3 })).place.map((a) => a.name)).to.deep.equal(['sys.g[0]']);
  });

  it('bad input is a SchedulerInputError naming each problem', () => {
    const ev = newEvaluation({ id: 'e', job: job('x'), triggeredBy: 'job-register', now: 0 });
    const bad = () =>
      schedule({ node: node({ resources: { cpuMHz: -1, memoryMB: NaN, diskMB: 1 } }), jobs: [], allocs: [], eval: ev, now: 0, newId: 'x' as never });
    expect(bad).to.throw(SchedulerInputError, /node.resources.cpuMHz.*node.resources.memoryMB.*newId/);
  });

  it('is deterministic: the same input gives the same plan', () => {
    const a = new World().register(job('web', { count: 3 }));
    const b = new World().register(job('web', { count: 3 }));
    expect(a).to.deep.equal(b);
  });

  it('changes nothing it is handed, so a plan can be shown and not stored (a dry run)', () => {
    const w = new World(node(), preemption('service'));
    w.register(job('lo', { priority: 10, count: 3, cpu: 1000 }));
    w.jobs.push(job('hi', { priority: 90, cpu: 2000 }));
    const allocs = [...w.allocs.values()];
    const ev = newEvaluation({ id: 'dry', job: w.jobs[1]!, triggeredBy: 'job-register', now: w.now });
    const before = structuredClone({ jobs: w.jobs, allocs, ev });
    const plan = schedule({ node: w.node, jobs: w.jobs, allocs, config: w.config, eval: ev, now: w.now, newId: w.newId });
    expect([plan.place.length, plan.preempt.length, plan.eval.status]).to.deep.equal([1, 2, 'complete']);
    expect({ jobs: w.jobs, allocs, ev }).to.deep.equal(before);
  });

  it('the first dimension that does not fit is named in Nomad’s order: ports, cores, cpu, memory, disk', () => {
    const w = new World(node({ reserved: { ports: [8080] } }));
    const http = { networks: [{ mode: 'host' as const, reservedPorts: [{ label: 'http', value: 8080 }], dynamicPorts: [] }] };
    const disk = { ephemeralDisk: { sizeMB: 10_001 } };
    const dim = (o: Parameters<typeof job>[1]) => Object.keys(w.register(job('x', o)).failedTgAllocs.g!.dimensionExhausted);
    expect(dim({ cores: 5, cpu: 3001, memoryMB: 3073, group: { ...http, ...disk } })).to.deep.equal(['network: reserved port collision http=8080']);
    expect(dim({ cores: 5, cpu: 3001, memoryMB: 3073, group: disk })).to.deep.equal(['cores']);
    expect(dim({ cpu: 3001, memoryMB: 3073, group: disk })).to.deep.equal(['cpu']);
    expect(dim({ memoryMB: 3073, group: disk })).to.deep.equal(['memory']);
    expect(dim({ group: disk })).to.deep.equal(['disk']);
  });

  it('the node offers its resources less its reserved block: reserved cpu, memory and disk go to no alloc', () => {
    const w = new World(node({ reserved: { cpuMHz: 500, memoryMB: 72, diskMB: 1000 } }));
    expect(w.register(job('a', { cpu: 2501 })).failedTgAllocs.g!.dimensionExhausted).to.deep.equal({ cpu: 1 });
    expect(w.register(job('b', { memoryMB: 3001 })).failedTgAllocs.g!.dimensionExhausted).to.deep.equal({ memory: 1 });
    expect(w.register(job('c', { group: { ephemeralDisk: { sizeMB: 9001 } } })).failedTgAllocs.g!.dimensionExhausted).to.deep.equal({ disk: 1 });
    expect(w.register(job('d', { cpu: 2500, memoryMB: 3000, group: { ephemeralDisk: { sizeMB: 9000 } } })).place).to.have.length(1);
  });

  it('an alloc desired stop or evict, or terminal on the client, no longer counts toward the fit', () => {
    const variants: Array<Partial<Allocation>> = [
      { desiredStatus: 'stop' },
      { desiredStatus: 'evict' },
      { clientStatus: 'complete' },
      { clientStatus: 'failed' },
      { clientStatus: 'lost' },
    ];
    for (const v of variants) {
      const w = new World();
      const [a] = w.register(job('a', { type: 'batch', cpu: 3000 })).place;
      expect(w.register(job('b', { cpu: 3000 })).place, 'while a runs').to.have.length(0);
      w.allocs.set(a!.id, { ...w.allocs.get(a!.id)!, ...v });
      expect(w.register(job('b', { cpu: 3000 })).place, JSON.stringify(v)).to.have.length(1);
    }
  });
});
