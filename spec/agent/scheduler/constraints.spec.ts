// Nomad's constraint checker over literal values (checkOrder: integers, then floats, then text;
// RE2 patterns with their leading flags; comma sets), its target lookup, and feasible() against
// the allocs the node already runs (distinct_hosts and distinct_property by job, group and
// namespace), each failure named as ConstraintFiltered names it.
import { expect } from 'chai';
import type { Allocation, Constraint, Job } from '../../../index.ts';
import { checkConstraint, feasible, meetsConstraint } from '../../../agent/scheduler/feasible.ts';
import { job, node } from './support.ts';

const lit = (v: string) => [v, true] as [string, boolean];
let seen = 0;

describe('scheduler: constraint operators over values', () => {
  // [operand, left, right, holds]
  const cases: Array<[string, string, string, boolean]> = [
    ['==', 'a', 'a', true],
    ['is', 'a', 'b', false],
    ['not', 'a', 'b', true],
    ['not', 'a', 'a', false],
    // Order: as integers when both parse, else as floats, else as text.
    ['<', '2', '10', true],
    ['<', '10', '2', false],
    ['<', '5', '5', false],
    ['<=', '5', '5', true],
    ['<=', '6', '5', false],
    ['>', '5', '5', false],
    ['>', '10', '9', true],
    ['>=', '5', '5', true],
    ['>=', '4', '5', false],
    ['>', '10', '9.5', true],
    ['>', '10.5', '9.25', true],
    ['<', '9.5', '10.25', true],
    ['>', '10.25', '9.5', true],
    ['<', '+9.5', '+10.5', true],
    ['>', '.25', '0.125', true],
    ['>', '2.', '10', false],
    ['>', '1e3', '999', true],
    ['>', '1e+3', '999', true],
    ['>', '1e10', '999', true],
    ['<', '1E-3', '0.5', true],
    ['>', 'inf', '5', true], // Go's ParseFloat reads inf and infinity, any case, signed
    ['<', '5', 'Infinity', true],
    ['<', '-inf', '-5', true],
    ['>', 'inf', '1e999', false],
    ['>', 'NaN', '5', false],
    ['<', 'nan', '5', false],
    ['<', '12abc', '3', true], // not numbers: text
    ['<', 'abc', 'abd', true],
    ['<', 'x12', 'x13', true],
    ['<', '5', 'abc', true],
    ['<', '1.5', 'abc', true],
    ['<', 'xinf', 'yinf', true],
    ['<', 'infa', 'infb', true],
    ['<', '5', 'inf', true], // on either side
    ['>', '-5', '-inf', true],
    // Sets: comma lists, items trimmed.
    ['set_contains', 'ab,cd', 'ab', true],
    ['set_contains_all', 'a,b', 'b, a', true],
    ['set_contains_all', 'a,b', 'a,c', false],
    ['set_contains_any', 'ab,cd', 'x,cd', true],
  ];
  for (const [op, l, r, holds] of cases) it(`${l} ${op} ${r} → ${holds}`, () => expect(checkConstraint(op, lit(l), lit(r))).to.equal(holds));

  describe('regexp (RE2 through RegExp, compiled once per pattern)', () => {
    // [name, value, leading flags, pattern, holds]
    const cases: Array<[string, string, string, string, boolean]> = [
      ['a plain pattern', 'linux', '', '^li', true],
      ['one that does not match', 'linux', '', '^ux', false],
      ['(?i): case-insensitive', 'linux', '(?i)', '^LINUX', true],
      ['(?is): several flags', 'li\nnux', '(?is)', '^LI.NUX', true],
      ['(?ii): a flag twice', 'linux', '(?ii)', '^LINUX', true],
      ['without the flag, case matters', 'linux', '', '^LINUX', false],
      ['a pattern that does not compile never matches', 'linux', '', '[', false],
    ];
    for (const [name, value, flags, body, holds] of cases)
      it(name, () => {
        // A pattern no earlier run compiled (compiled patterns are cached), checked twice: compiled, then cached.
        const p = `${flags}${body}(?:${++seen}${Date.now()})?`;
        expect([checkConstraint('regexp', lit(value), lit(p)), checkConstraint('regexp', lit(value), lit(p))]).to.deep.equal([holds, holds]);
      });
  });
});

describe('scheduler: constraint targets', () => {
  const bare = node({ name: undefined, datacenter: undefined, nodeClass: undefined, meta: { 'a}b': 'x', unknown: 'u' } });
  // [lTarget, operand, rTarget, holds] on a node with no name, datacenter or class
  const cases: Array<[string | undefined, string, string | undefined, boolean]> = [
    ['${node.unique.name}', '=', '', true],
    ['${node.datacenter}', '=', 'dc1', true],
    ['${node.class}', '=', '', true],
    ['${meta.a}b}', '=', 'x', true], // only the closing brace is cut
    ['${node.unknown}', 'is_set', undefined, false], // not a meta key of that name
    ['${node.unknown}', '!=', '', false], // an unknown target is ""
    ['${attr.missing}', '!=', '', false],
    ['${attr.missing}', 'is_not_set', undefined, true],
    [undefined, '=', '', true], // no targets: "" = ""
    [undefined, '=', undefined, true],
  ];
  for (const [l, op, r, holds] of cases)
    it(`${l} ${op} ${JSON.stringify(r)} → ${holds}`, () => expect(meetsConstraint({ lTarget: l, operand: op, rTarget: r }, bare)).to.equal(holds));
});

describe('scheduler: feasible() against what the node runs', () => {
  const n = node({ meta: { rack: 'r1' }, drivers: ['raw_exec'] });
  const alloc = (jobId: string, taskGroup: string, namespace?: string) =>
    ({ id: `${jobId}-${taskGroup}-${namespace}`, jobId, taskGroup, namespace }) as unknown as Allocation;
  const withGroups = (over: (j: Job) => void): Job => {
    const j = job('web');
    j.taskGroups.push({ ...structuredClone(j.taskGroups[0]!), name: 'h' });
    over(j);
    return j;
  };
  const hosts: Constraint = { operand: 'distinct_hosts' };
  const prop = (rTarget?: string, lTarget: string | undefined = '${meta.rack}'): Constraint => ({ lTarget, operand: 'distinct_property', rTarget });
  // [name, job, allocs on the node, reason for group g]
  const cases: Array<[string, Job, Allocation[], string | undefined]> = [
    [
      'a failed constraint with no right side is named with a trailing space',
      withGroups((j) => (j.constraints = [{ lTarget: '${attr.driver.docker}', operand: 'is_set' }])),
      [],
      '${attr.driver.docker} is_set ',
    ],
    ['one with no left side, with a leading space', withGroups((j) => (j.constraints = [{ operand: '=', rTarget: 'x' }])), [], ' = x'],
    [
      'one task of two with a missing driver',
      withGroups((j) => j.taskGroups[0]!.tasks.push({ ...j.taskGroups[0]!.tasks[0]!, name: 'u', driver: 'docker' })),
      [],
      'missing drivers',
    ],
    ['distinct_hosts (job): any alloc of the job collides, any group', withGroups((j) => (j.constraints = [hosts])), [alloc('web', 'h')], 'distinct_hosts'],
    ['distinct_hosts (job): none yet', withGroups((j) => (j.constraints = [hosts])), [], undefined],
    [
      'distinct_hosts (job): an alloc without a namespace is in default',
      withGroups((j) => ((j.constraints = [hosts]), (j.namespace = 'default'))),
      [alloc('web', 'g')],
      'distinct_hosts',
    ],
    [
      'distinct_hosts (job): the same id in another namespace is another job',
      withGroups((j) => (j.constraints = [hosts])),
      [alloc('web', 'g', 'other')],
      undefined,
    ],
    ['distinct_hosts (job): another job', withGroups((j) => (j.constraints = [hosts])), [alloc('api', 'g')], undefined],
    [
      'distinct_hosts (group): another group of the job does not collide',
      withGroups((j) => (j.taskGroups[0]!.constraints = [hosts])),
      [alloc('web', 'h')],
      undefined,
    ],
    [
      'distinct_hosts (group): the same group does',
      withGroups((j) => (j.taskGroups[0]!.constraints = [hosts])),
      [alloc('web', 'g', 'default')],
      'distinct_hosts',
    ],
    [
      'distinct_property (group): one alloc of the group uses the value',
      withGroups((j) => (j.taskGroups[0]!.constraints = [prop()])),
      [alloc('web', 'g')],
      'distinct_property: ${meta.rack}=r1 used by 1 allocs',
    ],
    [
      'distinct_property (group): another group’s alloc does not count',
      withGroups((j) => (j.taskGroups[0]!.constraints = [prop()])),
      [alloc('web', 'h')],
      undefined,
    ],
    [
      'distinct_property (job): another group’s alloc counts',
      withGroups((j) => (j.constraints = [prop()])),
      [alloc('web', 'h')],
      'distinct_property: ${meta.rack}=r1 used by 1 allocs',
    ],
    [
      'distinct_property: the second constraint fails',
      withGroups((j) => (j.constraints = [prop('5'), prop('1', '${node.datacenter}')])),
      [alloc('web', 'h')],
      'distinct_property: ${node.datacenter}=dc1 used by 1 allocs',
    ],
    ['distinct_property: no rTarget is 1, none used yet', withGroups((j) => (j.constraints = [prop()])), [], undefined],
    ['distinct_property: rTarget 12', withGroups((j) => (j.constraints = [prop('12')])), [alloc('web', 'g')], undefined],
    [
      'distinct_property: rTarget not a number',
      withGroups((j) => (j.constraints = [prop('x2')])),
      [],
      'failed to convert RTarget "x2" to uint64: strconv.ParseUint: parsing "x2": invalid syntax',
    ],
    [
      'distinct_property: rTarget with a tail',
      withGroups((j) => (j.constraints = [prop('2x')])),
      [],
      'failed to convert RTarget "2x" to uint64: strconv.ParseUint: parsing "2x": invalid syntax',
    ],
    ['distinct_property: an attribute the node lacks', withGroups((j) => (j.constraints = [prop('1', '${meta.nope}')])), [], 'missing property "${meta.nope}"'],
    [
      'distinct_property: no attribute at all',
      withGroups((j) => (j.constraints = [{ operand: 'distinct_property', rTarget: '1' }])),
      [],
      'missing property ""',
    ],
  ];
  for (const [name, j, proposed, why] of cases) it(name, () => expect(feasible({ node: n, job: j, group: j.taskGroups[0]!, proposed })).to.equal(why));
});
