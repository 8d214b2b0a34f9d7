// Nomad's preemptor on one node: candidates of other jobs at least 10 priority below, lowest
// priority first, nearest to what is missing first (ties: the first seen), the migrate
// max_parallel penalty per group already preempted, then the set trimmed farthest first
// (filterSuperset).
import { expect } from 'chai';
import type { Allocation } from '../../../index.ts';
import { preemptionScore, selectPreemptions, type PreemptionInput } from '../../../agent/scheduler/preemption.ts';
import type { Comparable } from '../../../agent/scheduler/resources.ts';
import { job } from './support.ts';

const c = (cpu: number, memoryMB: number): Comparable => ({ cpu, memoryMB, diskMB: 0, cores: [] });

function victim(
  id: string,
  priority: number | undefined,
  cpu: number,
  memoryMB: number,
  over: { jobId?: string; group?: string; namespace?: string; maxParallel?: number } = {},
): Allocation {
  const j = job(over.jobId ?? `job-${id}`, { priority: priority ?? 50 });
  if (priority === undefined) delete (j as { priority?: number }).priority;
  j.taskGroups[0]!.name = over.group ?? 'g';
  if (over.maxParallel !== undefined) j.taskGroups[0]!.migrate = { maxParallel: over.maxParallel } as never;
  return {
    id,
    jobId: j.id,
    namespace: over.namespace,
    taskGroup: j.taskGroups[0]!.name,
    job: j,
    allocatedResources: { tasks: { t: { cpu, memoryMB } }, shared: { diskMB: 0, ports: [] } },
  } as unknown as Allocation;
}

function pick(proposed: Allocation[], over: Partial<PreemptionInput> = {}): string[] | undefined {
  return selectPreemptions({
    jobId: 'hi',
    namespace: 'default',
    jobPriority: 70,
    ask: c(500, 500),
    remaining: c(0, 0),
    proposed,
    preemptedSoFar: [],
    ...over,
  })?.map((a) => a.id);
}

describe('scheduler: choosing what to preempt', () => {
  // [name, candidates, input changes, chosen]
  const cases: Array<[string, Allocation[], Partial<PreemptionInput>, string[] | undefined]> = [
    ['one that fits', [victim('a', 10, 500, 500)], {}, ['a']],
    ['not enough in all: none', [victim('a', 10, 100, 100)], {}, undefined],
    ['never the placing job itself', [victim('a', 10, 500, 500, { jobId: 'hi' })], {}, undefined],
    ['an alloc without a namespace is in default', [victim('a', 10, 500, 500, { jobId: 'hi' })], { namespace: 'default' }, undefined],
    ['the same job id in another namespace is another job', [victim('a', 10, 500, 500, { jobId: 'hi', namespace: 'other' })], {}, ['a']],
    ['9 below: too close', [victim('a', 61, 500, 500)], {}, undefined],
    ['10 below: a candidate', [victim('a', 60, 500, 500)], {}, ['a']],
    ['no priority is 50', [victim('a', undefined, 500, 500)], { jobPriority: 59 }, undefined],
    ['no priority is 50 (60 is enough)', [victim('a', undefined, 500, 500)], { jobPriority: 60 }, ['a']],
    ['the lowest priority first', [victim('b', 20, 500, 500), victim('a', 10, 500, 500)], {}, ['a']],
    ['within a priority, the nearest to the ask', [victim('big', 10, 2000, 2000), victim('near', 10, 500, 500)], {}, ['near']],
    ['equally near: the first seen', [victim('a1', 10, 500, 500), victim('a2', 10, 500, 500)], {}, ['a1']],
    ['several when one is not enough, in the order taken', [victim('x', 10, 250, 250), victim('y', 10, 250, 250)], {}, ['x', 'y']],
    ['what is already free counts', [victim('a', 10, 300, 300), victim('b', 10, 300, 300)], { remaining: c(200, 200) }, ['a']],
    ['trimmed: one that alone covers the ask makes the nearer one needless', [victim('a', 10, 400, 400), victim('b', 20, 1000, 1000)], {}, ['b']],
  ];
  for (const [name, proposed, over, chosen] of cases) it(name, () => expect(pick(proposed, over)).to.deep.equal(chosen));

  describe('migrate max_parallel: a group already preempted that often is penalised', () => {
    const x = () => victim('x', 10, 500, 500, { jobId: 'jx', maxParallel: 1 });
    const y = () => victim('y', 10, 900, 900, { jobId: 'jy' });
    const cases: Array<[string, Allocation[], string[]]> = [
      ['none preempted yet: the nearest', [], ['x']],
      ['one of its group preempted (max_parallel 1): the other', [victim('x0', 10, 1, 1, { jobId: 'jx' })], ['y']],
      ['one of another namespace’s group: no penalty', [victim('x0', 10, 1, 1, { jobId: 'jx', namespace: 'other' })], ['x']],
      ['one in default named so, the candidate in default by omission: the same group', [victim('x0', 10, 1, 1, { jobId: 'jx', namespace: 'default' })], ['y']],
      ['one of another group of the job: no penalty', [victim('x0', 10, 1, 1, { jobId: 'jx', group: 'h' })], ['x']],
    ];
    for (const [name, preemptedSoFar, chosen] of cases) it(name, () => expect(pick([x(), y()], { preemptedSoFar })).to.deep.equal(chosen));
  });

  it('max_parallel is the alloc’s own group’s, not the first of its job', () => {
    const second = victim('x', 10, 500, 500, { jobId: 'jx' });
    second.job.taskGroups.unshift({ ...structuredClone(second.job.taskGroups[0]!), name: 'first', migrate: { maxParallel: 1 } as never });
    expect(pick([second, victim('y', 10, 900, 900, { jobId: 'jy' })], { preemptedSoFar: [victim('x0', 10, 1, 1, { jobId: 'jx' })] })).to.deep.equal(['x']);
  });

  describe('the score: distance plus 50 per alloc at or past max_parallel', () => {
    const d = preemptionScore(c(100, 100), c(50, 50), 0, 0);
    const cases: Array<[number, number, number]> = [
      [0, 5, 0],
      [2, 1, 0],
      [3, 1, 0],
      [2, 2, 50],
      [2, 3, 100],
    ];
    for (const [maxParallel, already, penalty] of cases)
      it(`max_parallel ${maxParallel}, ${already} preempted: +${penalty}`, () =>
        expect(preemptionScore(c(100, 100), c(50, 50), maxParallel, already)).to.be.closeTo(d + penalty, 1e-9));
    it('the distance is Nomad’s: each of memory, cpu, disk as a fraction of the ask', () => expect(d).to.be.closeTo(Math.hypot(0.5, 0.5), 1e-9));
  });
});
