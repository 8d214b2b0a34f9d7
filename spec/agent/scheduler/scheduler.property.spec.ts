// Properties of the scheduler over random histories of job registrations, updates, stops,
// client failures and completions: whatever happens, the node is never over-committed, no port or
// core is given twice, names are unique per group, victims are evicted and were candidates, and
// the same history gives the same plans.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Allocation } from '../../../index.ts';
import { DEFAULT_JOB_PRIORITY, type Plan } from '../../../agent/scheduler/index.ts';
import { addComparable, allocComparable, emptyComparable, exhaustedDimension, nodeAvailable } from '../../../agent/scheduler/resources.ts';
import { propertyRuns, propertyTimeout } from '../../property/settings.ts';
import { job, node, preemption, World } from './support.ts';

type Step =
  | { kind: 'register'; j: number; priority: number; count: number; cpu: number; memoryMB: number; ports: number; static?: number; destructive: boolean }
  | { kind: 'stop'; j: number }
  | { kind: 'client'; pick: number; status: 'failed' | 'complete' | 'running' }
  | { kind: 'retry' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('register' as const),
      j: fc.integer({ min: 0, max: 4 }),
      priority: fc.constantFrom(10, 30, 50, 70, 100),
      count: fc.integer({ min: 0, max: 4 }),
      cpu: fc.constantFrom(100, 500, 1000, 1500),
      memoryMB: fc.constantFrom(64, 512, 1024, 2048),
      ports: fc.integer({ min: 0, max: 2 }),
      static: fc.option(fc.constantFrom(8080, 8081), { nil: undefined }),
      destructive: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), j: fc.integer({ min: 0, max: 4 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('client' as const),
      pick: fc.nat(),
      status: fc.constantFrom('failed' as const, 'complete' as const, 'running' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const) }) },
);

function check(w: World, plans: Plan[]): void {
  const live = [...w.allocs.values()].filter((a) => a.desiredStatus === 'run' && !['complete', 'failed', 'lost'].includes(a.clientStatus));
  const used = live.reduce((s, a) => addComparable(s, allocComparable(a)), emptyComparable());
  expect(exhaustedDimension(nodeAvailable(w.node), { ...used, cores: [] }), 'node over-committed').to.equal(undefined);
  expect(new Set(used.cores).size, 'a core given twice').to.equal(used.cores.length);
  const ports = live.flatMap((a) => a.allocatedResources?.shared.ports.map((p) => p.value) ?? []);
  expect(new Set(ports).size, `a port given twice: ${ports}`).to.equal(ports.length);
  for (const p of ports) expect(w.node.reserved?.ports ?? []).to.not.include(p);
  const names = live.map((a) => a.name);
  expect(new Set(names).size, `a name twice: ${names}`).to.equal(names.length);
  for (const plan of plans) {
    for (const a of plan.place) {
      for (const v of a.preemptedAllocations ?? []) {
        const victim = w.allocs.get(v)!;
        expect(victim.desiredStatus).to.equal('evict');
        expect(victim.jobId).to.not.equal(a.jobId);
        expect((a.job.priority ?? DEFAULT_JOB_PRIORITY) - (victim.job.priority ?? DEFAULT_JOB_PRIORITY)).to.be.at.least(10);
      }
    }
  }
}

function run(steps: Step[], preempt: boolean): { plans: Plan[]; allocs: Allocation[] } {
  const w = new World(
    node({ reserved: { ports: [20002], cores: [0] }, minDynamicPort: 20000, maxDynamicPort: 20009 }),
    preempt ? preemption('service') : undefined,
  );
  const versions = new Map<number, number>();
  const all: Plan[] = [];
  for (const s of steps) {
    w.now += 1000;
    let plans: Plan[] = [];
    if (s.kind === 'register') {
      const v = (versions.get(s.j) ?? -1) + 1;
      versions.set(s.j, v);
      const j = job(`j${s.j}`, {
        priority: s.priority,
        count: s.count,
        cpu: s.cpu,
        memoryMB: s.memoryMB,
        version: v,
        group: {
          networks: [
            {
              mode: 'host',
              reservedPorts: s.static ? [{ label: 's', value: s.static }] : [],
              dynamicPorts: Array.from({ length: s.ports }, (_, i) => ({ label: `d${i}` })),
            },
          ],
          reschedulePolicy: { attempts: 2, intervalMs: 60_000, delayMs: 0, delayFunction: 'constant', maxDelayMs: 0, unlimited: false },
        },
      });
      if (s.destructive) j.taskGroups[0].tasks[0].env = { V: String(v) };
      plans = [w.register(j), ...w.drain()];
    } else if (s.kind === 'stop') {
      const cur = w.jobs.find((x) => x.id === `j${s.j}`);
      if (!cur) continue;
      plans = [w.register({ ...cur, stop: true, version: (cur.version ?? 0) + 1 }, 'job-deregister'), ...w.drain()];
    } else if (s.kind === 'client') {
      const live = [...w.allocs.values()].filter((a) => a.desiredStatus === 'run' && a.clientStatus !== 'failed' && a.clientStatus !== 'complete');
      if (!live.length) continue;
      const a = live[s.pick % live.length];
      w.client(a.id, s.status);
      if (s.status !== 'running') plans = [w.evaluate(a.jobId, 'alloc-failure'), ...w.drain()];
    } else {
      for (const ev of [...w.evals.values()].filter((e) => e.status === 'blocked')) plans.push(w.process(ev));
      plans.push(...w.drain());
    }
    all.push(...plans);
    check(w, plans);
  }
  return { plans: all, allocs: [...w.allocs.values()] };
}

describe('scheduler: properties over random histories', function () {
  this.timeout(propertyTimeout(60_000));
  for (const preempt of [false, true]) {
    it(`never over-commits, never gives a port, core or name twice; victims are evicted candidates (preemption ${preempt ? 'on' : 'off'})`, () => {
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
          run(steps, preempt);
        }),
        propertyRuns(150),
      );
    });
  }
  it('the same history gives the same plans', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 15 }), (steps) => {
        expect(run(steps, true)).to.deep.equal(run(steps, true));
      }),
      propertyRuns(40),
    );
  });
});
