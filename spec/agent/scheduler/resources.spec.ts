// Nomad's resource arithmetic on one node: what the node offers (minus its reserved block and
// reserved cores), what an alloc holds or its group asks (task defaults, secrets as memory, whole
// cores, memory_max with oversubscription), Superset's first exhausted dimension, and the
// distance preemption ranks by.
import { expect } from 'chai';
import type { Allocation, TaskGroup } from '../../../index.ts';
import { MEMORY_NO_LIMIT } from '../../../index.ts';
import {
  addComparable,
  allocComparable,
  exhaustedDimension,
  groupAsk,
  nodeAvailable,
  resourceDistance,
  subtractComparable,
  type Comparable,
} from '../../../agent/scheduler/resources.ts';
import { job, node } from './support.ts';

const c = (cpu: number, memoryMB: number, diskMB = 0, cores: number[] = []): Comparable => ({ cpu, memoryMB, diskMB, cores });

describe('scheduler: resources', () => {
  it('adding unites cores', () => expect(addComparable(c(1, 2, 3, [0]), c(10, 20, 30, [2]))).to.deep.equal(c(11, 22, 33, [0, 2])));
  it('subtracting removes cores', () => expect(subtractComparable(c(10, 20, 30, [0, 1, 2]), c(1, 2, 3, [1]))).to.deep.equal(c(9, 18, 27, [0, 2])));

  describe('the first dimension that does not fit, in Nomad’s order', () => {
    const have = c(1000, 1000, 1000, [0, 1]);
    const cases: Array<[Comparable, string | undefined]> = [
      [c(1000, 1000, 1000, [0, 1]), undefined],
      [c(1001, 2000, 2000, [5]), 'cpu'],
      [c(1000, 2000, 2000, [5]), 'cores'],
      [c(1000, 2000, 2000, [1]), 'memory'],
      [c(1000, 1000, 1001), 'disk'],
    ];
    for (const [need, dim] of cases) it(`${JSON.stringify(need)}: ${dim}`, () => expect(exhaustedDimension(have, need)).to.equal(dim));
  });

  describe('what the node offers', () => {
    const res = { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000 };
    const cases: Array<[string, Parameters<typeof node>[0], Comparable]> = [
      ['no reserved block, one core by default', { resources: res }, c(3000, 3072, 10_000, [0])],
      [
        'reserved cpu, memory and disk',
        { resources: { ...res, cores: 2 }, reserved: { cpuMHz: 500, memoryMB: 72, diskMB: 1000 } },
        c(2500, 3000, 9000, [0, 1]),
      ],
      ['reserved cores are no one’s', { resources: { ...res, cores: 4 }, reserved: { cores: [1, 3] } }, c(3000, 3072, 10_000, [0, 2])],
    ];
    for (const [name, over, offered] of cases) it(name, () => expect(nodeAvailable(node(over))).to.deep.equal(offered));
  });

  describe('what a group asks', () => {
    const g = (tasks: TaskGroup['tasks'], disk?: number): TaskGroup => ({ name: 'g', tasks, ephemeralDisk: disk === undefined ? undefined : { sizeMB: disk } });
    const t = (name: string, resources?: TaskGroup['tasks'][number]['resources']) => ({ name, driver: 'raw_exec', config: {}, resources });
    const cases: Array<[string, TaskGroup, boolean, object]> = [
      [
        'Nomad’s defaults: 100 MHz, 300 MB, 300 MB of disk',
        g([t('a')]),
        false,
        { tasks: { a: { cpu: 100, memoryMB: 300 } }, shared: { diskMB: 300, ports: [] } },
      ],
      [
        'the secrets tmpfs counts as memory',
        g([t('a', { cpu: 200, memoryMB: 100, secretsMB: 4 })], 50),
        false,
        { tasks: { a: { cpu: 200, memoryMB: 104 } }, shared: { diskMB: 50, ports: [] } },
      ],
      [
        'whole cores: cpu comes from the cores picked',
        g([t('a', { cores: 2, cpu: 999 })]),
        false,
        { tasks: { a: { cpu: 0, memoryMB: 300 } }, shared: { diskMB: 300, ports: [] } },
      ],
      [
        'memory_max without oversubscription: not given',
        g([t('a', { memoryMB: 100, memoryMaxMB: 500 })]),
        false,
        { tasks: { a: { cpu: 100, memoryMB: 100 } }, shared: { diskMB: 300, ports: [] } },
      ],
      [
        'memory_max with oversubscription, grown by the secrets',
        g([t('a', { memoryMB: 100, memoryMaxMB: 500, secretsMB: 4 })]),
        true,
        { tasks: { a: { cpu: 100, memoryMB: 104, memoryMaxMB: 504 } }, shared: { diskMB: 300, ports: [] } },
      ],
      [
        'no hard limit stays no hard limit',
        g([t('a', { memoryMB: 100, memoryMaxMB: MEMORY_NO_LIMIT, secretsMB: 4 })]),
        true,
        { tasks: { a: { cpu: 100, memoryMB: 104, memoryMaxMB: MEMORY_NO_LIMIT } }, shared: { diskMB: 300, ports: [] } },
      ],
    ];
    for (const [name, group, oversub, ask] of cases) it(name, () => expect(groupAsk(group, oversub)).to.deep.equal(ask));
  });

  describe('what an alloc holds', () => {
    it('its allocated resources', () => {
      const a = {
        job: job('w'),
        taskGroup: 'g',
        allocatedResources: { tasks: { t: { cpu: 7, memoryMB: 8, cores: [1] }, u: { cpu: 1, memoryMB: 1 } }, shared: { diskMB: 9, ports: [] } },
      } as unknown as Allocation;
      expect(allocComparable(a)).to.deep.equal(c(8, 9, 9, [1]));
    });
    it('made by hand: what its group asks', () => {
      const j = job('w', { cpu: 250, memoryMB: 120 });
      j.taskGroups.unshift({ ...structuredClone(j.taskGroups[0]!), name: 'first', tasks: [] });
      expect(allocComparable({ job: j, taskGroup: 'g' } as unknown as Allocation)).to.deep.equal(c(250, 120, 300));
    });
    it('of a group its job no longer has: only the default disk', () => {
      expect(allocComparable({ job: job('w'), taskGroup: 'gone' } as unknown as Allocation)).to.deep.equal(c(0, 0, 300));
    });
  });

  describe('distance from an ask (lower is closer)', () => {
    const cases: Array<[Comparable, Comparable, number]> = [
      [c(100, 200, 300), c(100, 200, 300), 0],
      [c(100, 200, 300), c(50, 100, 0), Math.hypot(0.5, 0.5, 1)],
      [c(100, 200, 0), c(300, 200, 50), 2], // more than asked is as far; nothing asked is no distance
    ];
    for (const [ask, used, d] of cases)
      it(`${JSON.stringify(ask)} ← ${JSON.stringify(used)}: ${d}`, () => expect(resourceDistance(ask, used)).to.be.closeTo(d, 1e-9));
  });
});
