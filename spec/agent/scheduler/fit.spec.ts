// Fitting one alloc on the node (Nomad's bin-pack step with preemption): port collisions, a
// static port held by an alloc that may be preempted (another job, 10 or more priority below)
// or may not (the same job, the node's reserved ports), whole cores, and cpu/memory preempted
// for beside the port holders.
import { expect } from 'chai';
import type { Allocation, TaskGroup } from '../../../index.ts';
import { fit, type FitInput } from '../../../agent/scheduler/place.ts';
import { job, node } from './support.ts';

function holder(
  id: string,
  priority: number,
  ports: number[],
  over: { jobId?: string; namespace?: string; cpu?: number; cores?: number[]; maxParallel?: number } = {},
): Allocation {
  const j = job(over.jobId ?? `job-${id}`, { priority });
  if (over.maxParallel !== undefined) j.taskGroups[0]!.migrate = { maxParallel: over.maxParallel } as never;
  return {
    id,
    jobId: j.id,
    namespace: over.namespace,
    taskGroup: 'g',
    job: j,
    allocatedResources: {
      tasks: { t: { cpu: over.cpu ?? 100, memoryMB: 100, cores: over.cores } },
      shared: { diskMB: 0, ports: ports.map((value, i) => ({ label: `p${i}`, value, to: value, hostIp: '127.0.0.1' })) },
    },
  } as unknown as Allocation;
}

const group = (over: Partial<TaskGroup> = {}): TaskGroup => ({
  ...job('hi', { cpu: 500, memoryMB: 100 }).taskGroups[0]!,
  ephemeralDisk: { sizeMB: 0 },
  ...over,
});
const statics = (...values: number[]): TaskGroup['networks'] => [
  { mode: 'host', reservedPorts: values.map((value, i) => ({ label: `s${i}`, value })), dynamicPorts: [] },
];

function tryFit(over: Partial<FitInput>): string | string[] {
  const r = fit({
    node: node({ resources: { cpuMHz: 1000, memoryMB: 1000, diskMB: 1000, cores: 4 }, reserved: { ports: [22] } }),
    group: group(),
    jobId: 'hi',
    namespace: 'default',
    jobPriority: 70,
    proposed: [],
    preemptedSoFar: [],
    evict: true,
    memoryOversubscription: false,
    ...over,
  });
  return r.ok ? r.victims.map((v) => v.id) : r.dimension;
}

describe('scheduler: fitting one alloc', () => {
  // [name, input, victims or the exhausted dimension]
  const cases: Array<[string, Partial<FitInput>, string | string[]]> = [
    ['room: no victims', {}, []],
    ['two allocs already on one port: nothing fits', { proposed: [holder('a', 10, [8080]), holder('b', 10, [8080])] }, 'network: port collision'],
    [
      'a static port held, preemption off',
      { group: group({ networks: statics(8080) }), proposed: [holder('a', 10, [8080])], evict: false },
      'network: reserved port collision s0=8080',
    ],
    ['a static port held by a job 60 below: it is preempted', { group: group({ networks: statics(8080) }), proposed: [holder('a', 10, [8080])] }, ['a']],
    ['held by a job exactly 10 below: preempted', { group: group({ networks: statics(8080) }), proposed: [holder('a', 60, [8080])] }, ['a']],
    [
      'held by a job 9 below: not',
      { group: group({ networks: statics(8080) }), proposed: [holder('a', 61, [8080])] },
      'network: reserved port collision s0=8080',
    ],
    [
      'held by the placing job: not',
      { group: group({ networks: statics(8080) }), proposed: [holder('a', 10, [8080], { jobId: 'hi' })] },
      'network: reserved port collision s0=8080',
    ],
    [
      'held by the same job id in another namespace: preempted',
      { group: group({ networks: statics(8080) }), proposed: [holder('a', 10, [8080], { jobId: 'hi', namespace: 'other' })] },
      ['a'],
    ],
    ['the node’s reserved port: never', { group: group({ networks: statics(22) }) }, 'network: reserved port collision s0=22'],
    [
      'two ports of one holder: it is preempted once',
      { group: group({ networks: statics(8080, 8081) }), proposed: [holder('a', 10, [8080, 8081]), holder('b', 10, [9999])] },
      ['a'],
    ],
    ['two holders', { group: group({ networks: statics(8080, 8081) }), proposed: [holder('a', 10, [8080]), holder('b', 10, [8081])] }, ['a', 'b']],
    [
      'one holder may be preempted, the other not: none',
      { group: group({ networks: statics(8080, 8081) }), proposed: [holder('a', 10, [8080]), holder('b', 65, [8081])] },
      'network: reserved port collision s0=8080',
    ],
    [
      'a full dynamic range is not preempted for',
      {
        node: node({ resources: { cpuMHz: 1000, memoryMB: 1000, diskMB: 1000 }, minDynamicPort: 100, maxDynamicPort: 100 }),
        group: group({ networks: [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'd' }] }] }),
        proposed: [holder('a', 10, [100])],
      },
      'network: dynamic port selection failed',
    ],
    [
      'the same static port twice, its holder preemptible: still a collision',
      { group: group({ networks: statics(8080, 8080) }), proposed: [holder('a', 10, [8080])] },
      'network: reserved port collision s1=8080',
    ],
    [
      'an alloc made by hand (no allocated resources) holds no port',
      {
        group: group({ networks: statics(8080) }),
        proposed: [{ ...holder('m', 10, []), allocatedResources: undefined } as Allocation, holder('a', 10, [8080])],
      },
      ['a'],
    ],
    [
      'a group preempted max_parallel times by this plan already is passed over',
      {
        proposed: [holder('x', 10, [], { cpu: 450, jobId: 'jx', maxParallel: 1 }), holder('y', 10, [], { cpu: 450, jobId: 'jy' })],
        preemptedSoFar: [holder('x0', 10, [], { jobId: 'jx' })],
      },
      ['y'],
    ],
    [
      'the same without the earlier preemption: the first of two as near',
      { proposed: [holder('x', 10, [], { cpu: 450, jobId: 'jx', maxParallel: 1 }), holder('y', 10, [], { cpu: 450, jobId: 'jy' })] },
      ['x'],
    ],
    ['cpu short, preemption off', { proposed: [holder('a', 10, [], { cpu: 600 })], evict: false }, 'cpu'],
    ['cpu short: the lower job preempted', { proposed: [holder('a', 10, [], { cpu: 600 })] }, ['a']],
    ['cpu short, nothing to preempt', { proposed: [holder('a', 65, [], { cpu: 600 })] }, 'cpu'],
    [
      'a port holder and a cpu victim, the port holder first',
      { group: group({ networks: statics(8080) }), proposed: [holder('p', 10, [8080], { cpu: 10 }), holder('c', 10, [], { cpu: 900 })] },
      ['p', 'c'],
    ],
  ];
  for (const [name, over, result] of cases) it(name, () => expect(tryFit(over)).to.deep.equal(result));

  describe('whole cores', () => {
    const cores = (n: number): TaskGroup =>
      group({
        tasks: [
          { name: 't', driver: 'raw_exec', config: {}, resources: { cores: n, memoryMB: 100 } },
          { name: 'u', driver: 'raw_exec', config: {} },
        ],
      });
    it('the lowest free cores, and their MHz as cpu', () => {
      const r = fit({
        node: node({ resources: { cpuMHz: 4000, memoryMB: 1000, diskMB: 1000, cores: 4 } }),
        group: cores(2),
        jobId: 'hi',
        namespace: 'default',
        jobPriority: 70,
        proposed: [holder('a', 10, [], { cores: [0], cpu: 1000 })],
        preemptedSoFar: [],
        evict: false,
        memoryOversubscription: false,
      });
      expect(r.ok && r.resources.tasks).to.deep.equal({ t: { cpu: 2000, memoryMB: 100, cores: [1, 2] }, u: { cpu: 100, memoryMB: 300 } });
    });
    it('too few free: cores, never preempted for', () => {
      expect(tryFit({ group: cores(2), proposed: [holder('a', 10, [], { cores: [0, 1, 2] })] })).to.equal('cores');
    });
  });
});
