// The scheduler refuses input it cannot work with, naming every problem at once (a typed
// SchedulerInputError), and reads a job's datacenters as Nomad does (`*` wildcards, none: all).
import { expect } from 'chai';
import { newEvaluation, schedule, SchedulerInputError, type ScheduleInput } from '../../../agent/scheduler/index.ts';
import { nodeInDatacenters } from '../../../agent/scheduler/schedule.ts';
import { job, node } from './support.ts';

function input(over: Record<string, unknown> = {}): ScheduleInput {
  const j = job('web');
  let n = 0;
  return {
    node: node(),
    jobs: [j],
    allocs: [],
    eval: newEvaluation({ id: 'e1', job: j, triggeredBy: 'job-register', now: 1000 }),
    now: 1000,
    newId: () => `id-${++n}`,
    ...over,
  } as ScheduleInput;
}

function issues(over: Record<string, unknown>): string[] {
  try {
    schedule(input(over));
  } catch (e) {
    expect(e).to.be.instanceOf(SchedulerInputError);
    expect((e as Error).message).to.equal(`invalid scheduler input: ${(e as SchedulerInputError).issues.join('; ')}`);
    return (e as SchedulerInputError).issues;
  }
  return [];
}

const res = { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000 };
const withCount = (count: number) => {
  const j = job('web');
  j.taskGroups[0]!.count = count;
  return [j];
};

describe('scheduler: input it refuses', () => {
  // [name, input changes, issues]
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['valid', {}, []],
    [
      'no node',
      { node: undefined },
      [
        'node.id: required',
        'node.resources.cpuMHz: a number >= 0 is required',
        'node.resources.memoryMB: a number >= 0 is required',
        'node.resources.diskMB: a number >= 0 is required',
      ],
    ],
    ['a node without an id', { node: node({ id: '' }) }, ['node.id: required']],
    ['negative memory', { node: node({ resources: { ...res, memoryMB: -1 } }) }, ['node.resources.memoryMB: a number >= 0 is required']],
    ['no cpu at all is fine', { node: node({ resources: { ...res, cpuMHz: 0 } }) }, []],
    ['cpu not a number', { node: node({ resources: { ...res, cpuMHz: Number.NaN } }) }, ['node.resources.cpuMHz: a number >= 0 is required']],
    ['0 cores', { node: node({ resources: { ...res, cores: 0 } }) }, ['node.resources.cores: a whole number >= 1 is required']],
    ['1.5 cores', { node: node({ resources: { ...res, cores: 1.5 } }) }, ['node.resources.cores: a whole number >= 1 is required']],
    ['1 core is fine', { node: node({ resources: { ...res, cores: 1 } }) }, []],
    [
      'dynamic ports the wrong way round',
      { node: node({ minDynamicPort: 30000, maxDynamicPort: 20000 }) },
      ['node.minDynamicPort (30000) is above node.maxDynamicPort (20000)'],
    ],
    ['a single dynamic port is fine', { node: node({ minDynamicPort: 25000, maxDynamicPort: 25000 }) }, []],
    ['only a minimum is fine', { node: node({ minDynamicPort: 40000 }) }, []],
    ['only a maximum is fine', { node: node({ maxDynamicPort: 1000 }) }, []],
    ['no eval', { eval: undefined }, ['eval: an id and a jobId are required']],
    ['an eval without a job', { eval: { ...input().eval, jobId: '' } }, ['eval: an id and a jobId are required']],
    ['an eval without an id', { eval: { ...input().eval, id: '' } }, ['eval: an id and a jobId are required']],
    ['no id generator', { newId: 'x' }, ['newId: a function is required']],
    ['no time', { now: Number.NaN }, ['now: a time in ms is required']],
    ['a negative count', { jobs: withCount(-1) }, ['job web group g: count must be a whole number >= 0']],
    ['a fractional count', { jobs: withCount(1.5) }, ['job web group g: count must be a whole number >= 0']],
    ['count 0 is fine', { jobs: withCount(0) }, []],
    ['no job list', { jobs: undefined }, ['jobs: a list is required']],
    ['no alloc list', { allocs: 'none' }, ['allocs: a list is required']],
    ['an empty job list is fine (the job is gone)', { jobs: [] }, []],
  ];
  for (const [name, over, want] of cases) it(name, () => expect(issues(over)).to.deep.equal(want));

  it('every problem at once', () => expect(issues({ node: node({ id: '' }), now: Number.NaN, jobs: withCount(-2) })).to.have.length(3));
});

describe('scheduler: the job’s datacenters', () => {
  const cases: Array<[string, string[] | undefined, boolean]> = [
    ['dc1', undefined, true],
    ['dc1', [], true],
    ['dc1', ['dc1'], true],
    ['dc1', ['dc2'], false],
    ['dc1', ['dc2', 'dc1'], true],
    ['dc1', ['*'], true],
    ['dc1', ['dc*'], true],
    ['eu-west-1', ['eu-*-1'], true],
    ['eu-west-2', ['eu-*-1'], false],
    ['dcx1', ['dc.1'], false], // a dot is a dot
    ['dc1', ['c1'], false], // the whole name
    ['dc1', ['dc1+'], false],
  ];
  for (const [dc, dcs, inside] of cases) it(`${dc} in ${JSON.stringify(dcs)}: ${inside}`, () => expect(nodeInDatacenters(dc, dcs)).to.equal(inside));
});
