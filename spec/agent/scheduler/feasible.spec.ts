// Nomad's feasibility checks on the one node: every constraint operator (table), the levels a
// constraint may sit at, missing drivers, distinct_hosts / distinct_property, and the metric a
// filtered placement leaves (ConstraintFiltered keyed by the constraint's text).
import { expect } from 'chai';
import type { Constraint } from '../../../index.ts';
import { checkConstraint, feasible, resolveTarget } from '../../../agent/scheduler/feasible.ts';
import { job, node, World } from './support.ts';

const attrs = {
  'kernel.name': 'linux',
  'kernel.version': '6.8.0-45-generic',
  'cpu.arch': 'amd64',
  'cpu.numcores': '4',
  'nomad.version': '1.10.0',
  'driver.raw_exec': '1',
  tags: 'a,b, c',
};
const n = node({ attributes: attrs, meta: { rack: 'r1' }, nodeClass: 'gpu', drivers: ['raw_exec', 'exec'] });

describe('scheduler: feasibility (constraints against the node)', () => {
  describe('each operator', () => {
    // [lTarget, operand, rTarget, holds]
    const cases: Array<[string, string, string, boolean]> = [
      ['${attr.kernel.name}', '=', 'linux', true],
      ['${attr.kernel.name}', '==', 'windows', false],
      ['${attr.kernel.name}', 'is', 'linux', true],
      ['${attr.kernel.name}', '!=', 'windows', true],
      ['${attr.kernel.name}', 'not', 'linux', false],
      ['${attr.missing}', '!=', 'x', true],
      ['${attr.missing}', '=', '', false],
      ['${attr.cpu.numcores}', '>', '10', false], // numeric, not lexical ("4" > "10" lexically)
      ['${attr.cpu.numcores}', '>=', '4', true],
      ['${attr.cpu.numcores}', '<', '10', true],
      ['${attr.cpu.numcores}', '<=', '3', false],
      ['${attr.cpu.arch}', '<', 'arm64', true], // lexical
      ['${attr.nomad.version}', 'version', '>= 1.9, < 2.0', true],
      ['${attr.nomad.version}', 'version', '~> 1.9.0', false],
      // go-version: a pre-release version ("-45-generic") matches only a constraint with a pre-release.
      ['${attr.kernel.version}', 'version', '>= 6.0', false],
      ['${attr.nomad.version}', 'semver', '>= 1.10.0', true],
      // strict semver orders pre-releases instead: 6.8.0-45-generic is above 6.0.0.
      ['${attr.kernel.version}', 'semver', '>= 6.0.0', true],
      ['${attr.nomad.version}', 'semver', '> 1.10.0', false],
      ['${attr.kernel.version}', 'regexp', '^6\\.[0-9]+', true],
      ['${attr.kernel.name}', 'regexp', '(?i)LINUX', true],
      ['${attr.kernel.name}', 'regexp', '[', false],
      ['${attr.tags}', 'set_contains', 'a,c', true],
      ['${attr.tags}', 'set_contains_all', 'a,d', false],
      ['${attr.tags}', 'set_contains_any', 'd, c', true],
      ['${attr.tags}', 'set_contains_any', 'd,e', false],
      ['${attr.driver.raw_exec}', 'is_set', '', true],
      ['${attr.driver.docker}', 'is_set', '', false],
      ['${attr.driver.docker}', 'is_not_set', '', true],
      ['${meta.rack}', '=', 'r1', true],
      ['${node.class}', '=', 'gpu', true],
      ['${node.datacenter}', '=', 'dc1', true],
      ['${node.unique.id}', '=', 'node-1', true],
      ['${node.unique.name}', '=', 'n1', true],
      ['${node.pool}', '=', 'default', true],
      ['${attr.kernel.name}', 'bogus', 'linux', false],
    ];
    for (const [l, op, r, holds] of cases)
      it(`${l} ${op} ${JSON.stringify(r)} → ${holds}`, () => {
        expect(checkConstraint(op, resolveTarget(l, n), resolveTarget(r, n))).to.equal(holds);
      });
  });

  const kernel = (rTarget: string): Constraint => ({ lTarget: '${attr.kernel.name}', operand: '=', rTarget });

  for (const level of ['job', 'group', 'task'] as const)
    it(`a ${level}-level constraint is checked and named in ConstraintFiltered`, () => {
      const j = job('j');
      if (level === 'job') j.constraints = [kernel('windows')];
      if (level === 'group') j.taskGroups[0]!.constraints = [kernel('windows')];
      if (level === 'task') j.taskGroups[0]!.tasks[0]!.constraints = [kernel('windows')];
      const plan = new World(n).register(j);
      expect(plan.place).to.have.length(0);
      expect(plan.queued.g).to.equal(1);
      expect(plan.failedTgAllocs.g).to.deep.include({
        nodesEvaluated: 1,
        nodesFiltered: 1,
        nodesExhausted: 0,
        classFiltered: { gpu: 1 },
        constraintFiltered: { '${attr.kernel.name} = windows': 1 },
      });
    });

  it('a met constraint places, and the placed alloc carries the metric with scores', () => {
    const j = job('j');
    j.constraints = [kernel('linux')];
    const plan = new World(n).register(j);
    expect(plan.place).to.have.length(1);
    const m = plan.metrics[plan.place[0]!.id]!;
    expect(m).to.include({ nodesEvaluated: 1, nodesFiltered: 0 });
    expect(m.scoreMetaData?.[0]?.nodeId).to.equal('node-1');
  });

  it('a driver the node lacks is "missing drivers"', () => {
    const j = job('j');
    j.taskGroups[0]!.tasks[0]!.driver = 'rawexec';
    const plan = new World(n).register(j);
    expect(plan.place).to.have.length(0);
    expect(plan.failedTgAllocs.g?.constraintFiltered).to.deep.equal({ 'missing drivers': 1 });
  });

  it('distinct_hosts: the second alloc of the group on the one node is infeasible', () => {
    const j = job('j', { count: 2 });
    j.taskGroups[0]!.constraints = [{ operand: 'distinct_hosts' }];
    const plan = new World(n).register(j);
    expect(plan.place).to.have.length(1);
    expect(plan.queued.g).to.equal(1);
    expect(plan.failedTgAllocs.g?.constraintFiltered).to.deep.equal({ distinct_hosts: 1 });
  });

  it('distinct_property: as many allocs as rTarget allows share the node\u2019s value', () => {
    const j = job('j', { count: 3 });
    j.constraints = [{ lTarget: '${meta.rack}', operand: 'distinct_property', rTarget: '2' }];
    const plan = new World(n).register(j);
    expect(plan.place).to.have.length(2);
    expect(Object.keys(plan.failedTgAllocs.g?.constraintFiltered ?? {})).to.deep.equal(['distinct_property: ${meta.rack}=r1 used by 2 allocs']);
  });

  it('feasible() is undefined when every check passes', () => {
    const j = job('j');
    expect(feasible({ node: n, job: j, group: j.taskGroups[0]!, proposed: [] })).to.equal(undefined);
  });
});
