import { expect } from 'chai';
import type { Allocation } from '../../../index.ts';
import { preemptionScore, selectPreemptions, type Comparable } from '../../../agent/scheduler/index.ts';
import { job, node, preemption, World } from './support.ts';

describe('scheduler: preemption', () => {
  describe("the seed's scenario: lowered limits, lo (50, count 3, a third each) then hi (100, two thirds)", () => {
    const lo = job('lo', { priority: 50, count: 3, cpu: 1000, memoryMB: 1024 });
    const hi = job('hi', { priority: 100, count: 1, cpu: 2000, memoryMB: 2048 });

    it('with service preemption on, hi preempts exactly two lo allocs and lists both', () => {
      const w = new World(node(), preemption('service'));
      const loPlan = w.register(lo);
      expect(loPlan.place.map((a) => a.name)).to.deep.equal(['lo.g[0]', 'lo.g[1]', 'lo.g[2]']);
      const plan = w.register(hi);
      expect(plan.place).to.have.length(1);
      const placed = plan.place[0];
      expect(placed.name).to.equal('hi.g[0]');
      expect(plan.preempt).to.have.length(2);
      expect(placed.preemptedAllocations).to.have.members(plan.preempt.map((a) => a.id));
      for (const victim of plan.preempt) {
        expect(victim.jobId).to.equal('lo');
        expect(victim.desiredStatus).to.equal('evict');
        expect(victim.desiredDescription).to.equal(`Preempted by alloc ID ${placed.id}`);
      }
      expect(plan.desiredTgUpdates.g.preemptions).to.equal(2);
      // Nomad's plan applier makes an eval for the preempted job...
      const follow = plan.evals.filter((e) => e.triggeredBy === 'preemption');
      expect(follow.map((e) => e.jobId)).to.deep.equal(['lo']);
      // ...which finds no room for lo's two and blocks them (hi may not be preempted by lo).
      const [loAgain] = w.drain();
      expect(loAgain.place).to.have.length(0);
      expect(loAgain.queued.g).to.equal(2);
      expect(loAgain.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ cpu: 1 });
      expect(loAgain.failedTgAllocs.g.coalescedFailures).to.equal(1);
      const blocked = loAgain.evals.find((e) => e.status === 'blocked')!;
      expect(blocked.triggeredBy).to.equal('queued-allocs');
      expect(blocked.statusDescription).to.equal('created to place remaining allocations');
      expect(loAgain.eval.blockedEval).to.equal(blocked.id);
      expect(w.running('lo')).to.have.length(1);
      expect(w.running('hi')).to.have.length(1);
    });

    it('with preemption off (Nomad’s default for service jobs), hi is queued instead', () => {
      const w = new World(node());
      w.register(lo);
      const plan = w.register(hi);
      expect(plan.place).to.have.length(0);
      expect(plan.preempt).to.have.length(0);
      expect(plan.queued).to.deep.equal({ g: 1 });
      expect(plan.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ cpu: 1 });
      expect(plan.eval.status).to.equal('complete');
      expect(plan.eval.queuedAllocations).to.deep.equal({ g: 1 });
      const blocked = plan.evals.find((e) => e.id === plan.eval.blockedEval)!;
      expect(blocked.status).to.equal('blocked');
      expect(blocked.previousEval).to.equal(plan.eval.id);
      expect(w.running('lo')).to.have.length(3);
    });
  });

  describe('which scheduler types may preempt (preemption_config)', () => {
    const cases: Array<{ type: 'service' | 'batch' | 'sysbatch' | 'system'; config?: ReturnType<typeof preemption>; preempts: boolean }> = [
      { type: 'system', preempts: true }, // Nomad's default: system on
      { type: 'service', preempts: false },
      { type: 'batch', preempts: false },
      { type: 'sysbatch', preempts: false },
      { type: 'service', config: preemption('service'), preempts: true },
      { type: 'batch', config: preemption('batch'), preempts: true },
      { type: 'batch', config: preemption('service'), preempts: false },
      { type: 'sysbatch', config: preemption('sysbatch'), preempts: true },
      { type: 'system', config: preemption(), preempts: false },
    ];
    for (const c of cases) {
      it(`${c.type} job, ${c.config ? 'config ' + JSON.stringify(c.config.preemptionConfig) : 'default config'}: ${c.preempts ? 'preempts' : 'queued'}`, () => {
        const w = new World(node(), c.config);
        w.register(job('lo', { priority: 20, count: 3, cpu: 1000, memoryMB: 1000 }));
        const plan = w.register(job('hi', { type: c.type, priority: 90, cpu: 1500, memoryMB: 500 }));
        expect(plan.place.length).to.equal(c.preempts ? 1 : 0);
        expect(plan.preempt.length).to.equal(c.preempts ? 2 : 0);
      });
    }
  });

  describe('candidates: only jobs at least 10 priority lower', () => {
    const cases = [
      { victim: 41, placing: 50, preempts: false },
      { victim: 40, placing: 50, preempts: true },
      { victim: 50, placing: 50, preempts: false },
      { victim: 89, placing: 100, preempts: true },
      { victim: 95, placing: 100, preempts: false },
    ];
    for (const c of cases) {
      it(`victim ${c.victim}, placing ${c.placing}: ${c.preempts ? 'evicted' : 'not a candidate'}`, () => {
        const w = new World(node(), preemption('service'));
        w.register(job('lo', { priority: c.victim, count: 1, cpu: 3000, memoryMB: 100 }));
        const plan = w.register(job('hi', { priority: c.placing, cpu: 1000 }));
        expect(plan.preempt.map((a) => a.jobId)).to.deep.equal(c.preempts ? ['lo'] : []);
      });
    }
    it("never the placing job's own allocs", () => {
      const w = new World(node(), preemption('service'));
      w.register(job('a', { priority: 100, count: 3, cpu: 1000 }));
      const plan = w.register(job('a', { priority: 100, count: 4, cpu: 1000, version: 0 }));
      expect(plan.preempt).to.have.length(0);
      expect(plan.queued.g).to.equal(1);
    });
  });

  it('lowest priority first, even when a higher-priority candidate fits better', () => {
    const w = new World(node(), preemption('service'));
    w.register(job('p30', { priority: 30, count: 1, cpu: 1000, memoryMB: 500 }));
    w.register(job('p20', { priority: 20, count: 1, cpu: 500, memoryMB: 500 }));
    w.register(job('p10', { priority: 10, count: 1, cpu: 500, memoryMB: 500 }));
    w.register(job('fill', { priority: 90, count: 1, cpu: 1000, memoryMB: 100 }));
    const plan = w.register(job('hi', { priority: 80, cpu: 1000, memoryMB: 500 }));
    expect(plan.preempt.map((a) => a.jobId).sort()).to.deep.equal(['p10', 'p20']);
  });

  it('within a priority, the alloc whose resources best fit what is missing', () => {
    const w = new World(node(), preemption('service'));
    w.register(job('small', { priority: 20, count: 1, cpu: 500, memoryMB: 256 }));
    w.register(job('exact', { priority: 20, count: 1, cpu: 1000, memoryMB: 1024 }));
    w.register(job('big', { priority: 20, count: 1, cpu: 1500, memoryMB: 1792 }));
    const plan = w.register(job('hi', { priority: 80, cpu: 1000, memoryMB: 1024 }));
    expect(plan.preempt.map((a) => a.jobId)).to.deep.equal(['exact']);
  });

  it('the smallest sufficient set: allocs the others already make room for are dropped (filterSuperset)', () => {
    // Picked lowest priority first: `a` (not enough), then `big` (enough). Trimmed farthest from
    // the ask first: `big` alone covers it, so `a` keeps running.
    const w = new World(node(), preemption('service'));
    w.register(job('a', { priority: 10, cpu: 300, memoryMB: 300 }));
    w.register(job('big', { priority: 20, cpu: 2000, memoryMB: 2000 }));
    w.register(job('fill', { priority: 95, cpu: 700, memoryMB: 772 }));
    const plan = w.register(job('hi', { priority: 90, cpu: 1000, memoryMB: 1000 }));
    expect(plan.preempt.map((a) => a.jobId)).to.deep.equal(['big']);
    // The same choice straight from the preemptor, with the greedy pass visible.
    const mk = (id: string, priority: number, cpu: number, memoryMB: number): Allocation =>
      ({
        id,
        jobId: id,
        job: job(id, { priority }),
        taskGroup: 'g',
        allocatedResources: { tasks: { t: { cpu, memoryMB } }, shared: { diskMB: 0, ports: [] } },
      }) as unknown as Allocation;
    const input = {
      jobId: 'hi',
      namespace: 'default',
      jobPriority: 90,
      ask: { cpu: 1000, memoryMB: 1000, diskMB: 0, cores: [] },
      remaining: { cpu: 0, memoryMB: 0, diskMB: 0, cores: [] } as Comparable,
      preemptedSoFar: [],
    };
    expect(selectPreemptions({ ...input, proposed: [mk('a', 10, 300, 300), mk('big', 20, 2000, 2000)] })!.map((a) => a.id)).to.deep.equal(['big']);
    expect(selectPreemptions({ ...input, proposed: [mk('a', 10, 300, 300), mk('b', 10, 300, 300)] })).to.equal(undefined);
  });

  describe('the max_parallel penalty (Nomad: 50 per alloc of the group beyond migrate.max_parallel already preempted)', () => {
    const r = (cpu: number, memoryMB: number): Comparable => ({ cpu, memoryMB, diskMB: 0, cores: [] });
    const cases = [
      { maxParallel: 0, already: 5, penalty: 0 },
      { maxParallel: 2, already: 1, penalty: 0 },
      { maxParallel: 2, already: 2, penalty: 50 },
      { maxParallel: 1, already: 3, penalty: 150 },
    ];
    for (const c of cases) {
      it(`max_parallel ${c.maxParallel}, ${c.already} already preempted: +${c.penalty}`, () => {
        const base = preemptionScore(r(1000, 1000), r(500, 500), 0, 0);
        expect(preemptionScore(r(1000, 1000), r(500, 500), c.maxParallel, c.already) - base).to.be.closeTo(c.penalty, 1e-9);
      });
    }
    it('spreads a plan’s evictions over jobs once one group reached its max_parallel', () => {
      const w = new World(node({ resources: { cpuMHz: 4000, memoryMB: 4000, diskMB: 10_000, cores: 4 } }), preemption('service'));
      const migrate = { maxParallel: 1, healthCheck: 'checks' as const, minHealthyTimeMs: 0, healthyDeadlineMs: 0 };
      w.register(job('a', { priority: 10, count: 2, cpu: 1000, memoryMB: 1000, group: { migrate } }));
      w.register(job('b', { priority: 10, count: 2, cpu: 1000, memoryMB: 1000, group: { migrate } }));
      const plan = w.register(job('hi', { priority: 90, count: 2, cpu: 1000, memoryMB: 1000 }));
      expect(plan.place).to.have.length(2);
      expect(plan.preempt.map((a) => a.jobId).sort()).to.deep.equal(['a', 'b']);
    });
  });

  it('whole cores are never preempted for: "cores" exhausted', () => {
    const w = new World(node({ resources: { cpuMHz: 4000, memoryMB: 4000, diskMB: 10_000, cores: 2 } }), preemption('service'));
    w.register(job('lo', { priority: 10, count: 2, cores: 1, memoryMB: 100 }));
    const plan = w.register(job('hi', { priority: 90, cores: 1, memoryMB: 100 }));
    expect(plan.place).to.have.length(0);
    expect(plan.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ cores: 1 });
  });

  it('a static port held by a lower-priority job is preempted for; one held by a peer is not', () => {
    const net = (value: number) => ({ networks: [{ mode: 'host' as const, reservedPorts: [{ label: 'http', value }], dynamicPorts: [] }] });
    const w = new World(node(), preemption('service'));
    w.register(job('lo', { priority: 10, group: net(8080) }));
    w.register(job('peer', { priority: 85, group: net(9090) }));
    const plan = w.register(job('hi', { priority: 90, group: net(8080) }));
    expect(plan.preempt.map((a) => a.jobId)).to.deep.equal(['lo']);
    expect(plan.place[0].allocatedResources!.shared.ports[0].value).to.equal(8080);
    const blocked = w.register(job('hi2', { priority: 90, group: net(9090) }));
    expect(blocked.place).to.have.length(0);
    expect(blocked.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ 'network: reserved port collision http=9090': 1 });
  });

  it('static ports are preempted for only when every holder of them may be preempted', () => {
    const net = (...values: number[]) => ({
      networks: [{ mode: 'host' as const, reservedPorts: values.map((value, i) => ({ label: `p${i}`, value })), dynamicPorts: [] }],
    });
    const w = new World(node(), preemption('service'));
    w.register(job('lo', { priority: 10, group: net(8080) }));
    w.register(job('peer', { priority: 85, group: net(9090) }));
    const plan = w.register(job('hi', { priority: 90, group: net(8080, 9090) }));
    expect(plan.preempt).to.deep.equal([]);
    expect(plan.place).to.deep.equal([]);
    expect(plan.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ 'network: reserved port collision p0=8080': 1 });
  });
});
