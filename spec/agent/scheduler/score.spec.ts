// The scores a placement's metrics carry (`nomad alloc status -verbose`), one table per Nomad
// scorer: binpack (ScoreFitBinPack over 18), job anti-affinity, the reschedule penalty, node
// affinity, spread, and their mean over the scorers that count.
import { expect } from 'chai';
import type { Affinity, Allocation, Job, Spread } from '../../../index.ts';
import { binpackScore, scorePlacement, type ScoreInput } from '../../../agent/scheduler/score.ts';
import type { Comparable } from '../../../agent/scheduler/resources.ts';
import { job, node } from './support.ts';

const c = (cpu: number, memoryMB: number): Comparable => ({ cpu, memoryMB, diskMB: 0, cores: [] });
const close = (a: number, b: number) => expect(a).to.be.closeTo(b, 1e-9);

/** An alloc holding `cpu` MHz and `memoryMB` MB, of `jobId`'s group `group`. */
function held(jobId: string, group: string, cpu: number, memoryMB: number, id = `${jobId}-${group}-${cpu}`): Allocation {
  return {
    id,
    jobId,
    taskGroup: group,
    job: job(jobId),
    allocatedResources: { tasks: { t: { cpu, memoryMB } }, shared: { diskMB: 0, ports: [] } },
  } as unknown as Allocation;
}

const n = node({ resources: { cpuMHz: 1000, memoryMB: 1000, diskMB: 10_000 }, attributes: { 'kernel.name': 'linux' }, meta: { rack: 'r1' } });

function input(over: Partial<ScoreInput> & { jobOver?: Partial<Job>; count?: number; groupOver?: Partial<Job['taskGroups'][number]> } = {}): ScoreInput {
  const j = { ...job('web', { count: over.count ?? 4, group: over.groupOver }), ...over.jobOver };
  return { node: n, job: j, group: j.taskGroups[0]!, proposed: [], ask: c(100, 100), reschedule: false, ...over };
}

describe('scheduler: placement scores (Nomad rank iterators)', () => {
  describe('binpack: 20 - (10^freeCpu + 10^freeMem), bounded to [0, 18], over 18', () => {
    // [available, used, score]
    const cases: Array<[string, Comparable, Comparable, number]> = [
      ['an empty node scores 0', c(1000, 1000), c(0, 0), 0],
      ['a full node scores 1', c(1000, 1000), c(1000, 1000), 1],
      ['half used: 20 - 2·√10', c(1000, 1000), c(500, 500), (20 - 2 * Math.sqrt(10)) / 18],
      ['cpu full, memory free: (20 - 11) / 18', c(1000, 1000), c(1000, 0), 0.5],
      ['memory full, cpu a quarter used', c(1000, 1000), c(250, 1000), (20 - (10 ** 0.75 + 1)) / 18],
      ['overcommitted: bounded to 18', c(1000, 1000), c(2000, 2000), 1],
      ['no cpu at all counts as nothing free', c(0, 1000), c(0, 500), (20 - (1 + Math.sqrt(10))) / 18],
      ['no memory at all counts as nothing free', c(1000, 0), c(0, 0), (20 - (10 + 1)) / 18],
    ];
    for (const [name, available, used, score] of cases) it(name, () => close(binpackScore(available, used), score));
  });

  it('an alloc alone on the node: binpack of its ask, no other scorer counts', () => {
    const { scores, normScore } = scorePlacement(input());
    const b = binpackScore(c(1000, 1000), c(100, 100));
    expect(scores).to.deep.equal({ binpack: b, 'job-anti-affinity': 0, 'node-reschedule-penalty': 0, 'node-affinity': 0 });
    close(normScore, b);
  });

  it('binpack counts what the node already runs (any job) plus the ask', () => {
    const { scores } = scorePlacement(input({ proposed: [held('other', 'x', 300, 200), held('web', 'g', 100, 200)] }));
    close(scores.binpack!, binpackScore(c(1000, 1000), c(500, 500)));
  });

  describe('job anti-affinity: -(collisions + 1) / count, counted only with collisions', () => {
    const b = (used: number) => binpackScore(c(1000, 1000), c(used + 100, used + 100));
    // [name, proposed, group count, anti-affinity]
    const cases: Array<[string, Allocation[], number | undefined, number]> = [
      ['another job or another group of the job does not collide', [held('other', 'g', 100, 100), held('web', 'h', 100, 100)], 4, 0],
      ['one of the same group, count 4: -2/4', [held('web', 'g', 100, 100)], 4, -0.5],
      ['two of the same group, count 4: -3/4', [held('web', 'g', 100, 100, 'a'), held('web', 'g', 100, 100, 'b')], 4, -0.75],
      ['no count is Nomad count 1', [held('web', 'g', 100, 100)], undefined, -2],
      ['count 0 divides by 1', [held('web', 'g', 100, 100)], 0, -2],
    ];
    for (const [name, proposed, count, score] of cases)
      it(name, () => {
        const base = input({ proposed });
        const group = { ...base.group, count };
        const { scores, normScore } = scorePlacement({ ...base, group, job: { ...base.job, taskGroups: [group] } });
        close(scores['job-anti-affinity']!, score);
        const used = proposed.length * 100;
        close(normScore, score === 0 ? b(used) : (b(used) + score) / 2);
      });
  });

  it('a reschedule penalises the node (-1) and counts it', () => {
    const { scores, normScore } = scorePlacement(input({ reschedule: true }));
    expect(scores['node-reschedule-penalty']).to.equal(-1);
    close(normScore, (scores.binpack! - 1) / 2);
  });

  describe('node affinity: the weights that match over the sum of |weight|, counted when any match', () => {
    const a = (lTarget: string, operand: string, rTarget: string | undefined, weight?: number): Affinity => ({ lTarget, operand, rTarget, weight });
    // [name, job, group, task affinities, score]
    const cases: Array<[string, Affinity[], Affinity[], Affinity[], number]> = [
      ['one that matches, weight 100', [a('${attr.kernel.name}', '=', 'linux', 100)], [], [], 1],
      ['one that does not match', [a('${attr.kernel.name}', '=', 'windows', 100)], [], [], 0],
      [
        'job, group and task levels add up: (100 - 25) / 175',
        [a('${attr.kernel.name}', '=', 'linux', 100)],
        [a('${meta.rack}', '=', 'r2', 50)],
        [a('${meta.rack}', '=', 'r1', -25)],
        75 / 175,
      ],
      ['no weight is 50', [a('${meta.rack}', '=', 'r1')], [a('${meta.rack}', '=', 'r9', 50)], [], 0.5],
      [
        'a negative weight that matches pushes away',
        [],
        [a('${meta.rack}', '=', 'r1', -50)],
        [a('${meta.rack}', '=', 'r1', 50), a('${meta.rack}', '=', 'r1', -50)],
        -50 / 150,
      ],
      ['weights of 0 score 0', [a('${meta.rack}', '=', 'r1', 0)], [], [], 0],
      ['no targets at all compare "" with "" (literals): a match', [{ operand: '=', weight: 10 }], [], [], 1],
      ['is_set needs no right side', [], [], [a('${meta.rack}', 'is_set', undefined, 20)], 1],
    ];
    for (const [name, jobAff, groupAff, taskAff, score] of cases)
      it(name, () => {
        const base = input();
        const group = { ...base.group, affinities: groupAff, tasks: base.group.tasks.map((t) => ({ ...t, affinities: taskAff })) };
        const { scores, normScore } = scorePlacement({ ...base, group, job: { ...base.job, affinities: jobAff, taskGroups: [group] } });
        close(scores['node-affinity']!, score);
        close(normScore, score === 0 ? scores.binpack! : (scores.binpack! + score) / 2);
      });
  });

  it('group affinities count without job ones', () => {
    const base = input();
    const group = { ...base.group, affinities: [{ lTarget: '${meta.rack}', operand: '=', rTarget: 'r1', weight: 40 }] };
    expect(scorePlacement({ ...base, group, job: { ...base.job, taskGroups: [group] } }).scores['node-affinity']).to.equal(1);
  });

  describe('spread: (desired - used) / desired per spread, by weight over the weights', () => {
    const sp = (attribute: string, targets: Array<[string, number?]> | undefined, weight?: number): Spread => ({
      attribute,
      weight,
      spreadTarget: targets?.map(([value, percent]) => ({ value, percent })),
    });
    // [name, job spreads, group spreads, allocs of the group already here, group count, score]
    const cases: Array<[string, Spread[], Spread[], number, number, number]> = [
      [
        'the node is the target of 50 % of 4, one used: (2 - 1) / 2',
        [],
        [
          sp('${node.datacenter}', [
            ['dc1', 50],
            ['dc2', 25],
          ]),
        ],
        1,
        4,
        0.5,
      ],
      ['nothing used yet: the full boost', [], [sp('${node.datacenter}', [['dc1', 50]])], 0, 4, 1],
      ['over its target: negative', [], [sp('${node.datacenter}', [['dc1', 25]])], 2, 4, -1],
      [
        'a value in no target takes what the targets leave: 100 - 75 % of 4 = 1',
        [],
        [
          sp('${meta.rack}', [
            ['r7', 50],
            ['r8', 25],
          ]),
        ],
        0,
        4,
        1,
      ],
      [
        'a value in no target, the targets take 100 %: -weight',
        [],
        [
          sp('${meta.rack}', [
            ['r7', 60],
            ['r8', 40],
          ]),
        ],
        0,
        4,
        -1,
      ],
      ['a missing attribute is in no target: what the targets leave, 50 % of 4', [], [sp('${attr.missing}', [['x', 50]])], 1, 4, 0.5],
      ['a target with no percent wants nothing: -weight', [], [sp('${node.datacenter}', [['dc1']])], 0, 4, -1],
      ['an even spread (no targets) adds nothing', [sp('${node.datacenter}', undefined)], [], 0, 4, 0],
      [
        'job and group spreads weigh in by weight: 30 % at +1, 70 % at -1',
        [sp('${node.datacenter}', [['dc1', 50]], 30)],
        [sp('${meta.rack}', [['r9', 100]], 70)],
        0,
        4,
        0.3 - 0.7,
      ],
      ['no weight is 50 each', [sp('${node.datacenter}', [['dc1', 50]])], [sp('${meta.rack}', [['r9', 100]], 50)], 0, 4, 0],
      ['weights that sum to 0 score 0', [], [sp('${node.datacenter}', [['dc1', 50]], 0)], 0, 4, 0],
      ['no count is 1: 100 % of 1', [], [sp('${node.datacenter}', [['dc1', 100]])], 0, 0, 1],
    ];
    for (const [name, jobSpreads, groupSpreads, used, count, score] of cases)
      it(name, () => {
        const base = input({ count });
        const group = { ...base.group, count: count || undefined, spreads: groupSpreads };
        const proposed = Array.from({ length: used }, (_, i) => held('web', 'g', 0, 0, `u${i}`));
        const { scores, normScore } = scorePlacement({ ...base, proposed, group, job: { ...base.job, spreads: jobSpreads, taskGroups: [group] } });
        close(scores['allocation-spread']!, score);
        const counted = [scores.binpack!, ...(used > 0 ? [scores['job-anti-affinity']!] : []), ...(score !== 0 ? [score] : [])];
        close(normScore, counted.reduce((x, y) => x + y, 0) / counted.length);
      });
  });

  it('every scorer at once: the mean of those that count', () => {
    const base = input({ proposed: [held('web', 'g', 100, 100)], reschedule: true, count: 2 });
    const group = { ...base.group, spreads: [{ attribute: '${node.datacenter}', spreadTarget: [{ value: 'dc1', percent: 100 }] }] };
    const j = { ...base.job, affinities: [{ lTarget: '${meta.rack}', operand: '=', rTarget: 'r1', weight: 100 }], taskGroups: [group] };
    const { scores, normScore } = scorePlacement({ ...base, job: j, group });
    const b = binpackScore(c(1000, 1000), c(200, 200));
    expect(scores).to.deep.equal({
      binpack: b,
      'job-anti-affinity': -1,
      'node-reschedule-penalty': -1,
      'node-affinity': 1,
      'allocation-spread': 0.5,
    });
    close(normScore, (b - 1 - 1 + 1 + 0.5) / 5);
  });
});
