/** Task names a cgroup, a path and an environment accept, refused at parse with the field path. */
import { expect } from 'chai';
import { parseAllocation } from '../../model/parse.ts';
import { InvalidAllocationError } from '../../model/errors.ts';
import { MAX_TASK_NAME_BYTES, RESERVED_TASK_NAMES, isUUID, pathComponentProblem, taskNameCgroupProblem, taskNameProblem } from '../../model/names.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

describe('task names (cgroupfs, paths, env)', () => {
  for (const bad of ['web\n', 'a\nb', 'tab\there', 'cr\r', 'del\u007f', 'cgroup.procs', 'memory.max', 'CPU.weight', 'tasks', 'pids.max'])
    it(`refuses ${JSON.stringify(bad)} at parse, naming the path`, () => {
      try {
        parseAllocation(makeAlloc([mockTask(bad)]));
        expect.fail('parsed');
      } catch (e) {
        expect(e).to.be.instanceOf(InvalidAllocationError);
        expect((e as InvalidAllocationError).issues.join('\n')).to.match(/job\.taskGroups\[0\]\.tasks\[0\]\.name: /);
      }
    });

  it('keeps ordinary names (and ones that only look like controllers)', () => {
    for (const ok of ['web', 'web-1', 'my task', 'memory', 'cpu', 'ünïcode', 'a.b', 'memorycache.x']) expect(taskNameCgroupProblem(ok), ok).to.equal(undefined);
    expect(() => parseAllocation(makeAlloc([mockTask('memory')]))).to.not.throw();
  });

  it('names each problem exactly', () => {
    expect(pathComponentProblem('')).to.equal('must be a non-empty string');
    expect(pathComponentProblem(7)).to.equal('must be a non-empty string');
    expect(pathComponentProblem('.')).to.equal('must not be "."');
    expect(pathComponentProblem('..')).to.equal('must not be ".."');
    expect(pathComponentProblem('a/b')).to.equal('must not contain "/"');
    expect(pathComponentProblem('a\0b')).to.equal('must not contain NUL');
    expect(pathComponentProblem('...')).to.equal(undefined);
    expect(pathComponentProblem('a\\b')).to.equal(undefined); // a path component may hold a backslash
    expect(taskNameProblem('a\\b')).to.equal('must not contain "\\"');
    expect(taskNameProblem('..')).to.equal('must not be ".."');
    expect(RESERVED_TASK_NAMES).to.deep.equal(['alloc']);
    expect(taskNameProblem('alloc')).to.equal('must not be "alloc" (reserved by the alloc dir)');
    expect(taskNameProblem('Alloc')).to.equal(undefined);
    expect(MAX_TASK_NAME_BYTES).to.equal(128);
    expect(taskNameProblem('x'.repeat(128))).to.equal(undefined);
    expect(taskNameProblem('x'.repeat(129))).to.equal('must be at most 128 bytes (got 129)');
    expect(taskNameProblem('é'.repeat(65))).to.equal('must be at most 128 bytes (got 130)');
    expect(taskNameProblem('tab\there')).to.equal(
      'must not contain control characters (found U+0009): the name becomes a cgroup directory and an environment value',
    );
    expect(taskNameCgroupProblem('\u007f')).to.match(/found U\+007F\)/);
    expect(taskNameCgroupProblem('\u001f')).to.match(/found U\+001F\)/);
    expect(taskNameCgroupProblem(' ')).to.equal(undefined);
    expect(taskNameCgroupProblem('Notify_On_Release')).to.equal('must not be "Notify_On_Release" (a cgroup interface file of the alloc\'s cgroup)');
    expect(taskNameCgroupProblem('release_agent')).to.equal('must not be "release_agent" (a cgroup interface file of the alloc\'s cgroup)');
    expect(taskNameCgroupProblem('tasks.x')).to.equal(undefined);
    for (const p of [
      'cgroup',
      'cpu',
      'cpuacct',
      'cpuset',
      'memory',
      'io',
      'blkio',
      'pids',
      'hugetlb',
      'rdma',
      'misc',
      'devices',
      'freezer',
      'net_cls',
      'net_prio',
      'perf_event',
    ])
      expect(taskNameCgroupProblem(`${p.toUpperCase()}.x`), p).to.equal(`must not start with "${p}." (the name of the alloc cgroup's interface files)`);
  });

  it('isUUID: 36 characters in the 8-4-4-4-12 hex form, any case', () => {
    expect(isUUID('0123abcd-0123-4567-89ab-ABCDEF012345')).to.equal(true);
    for (const bad of [
      '0123abcd-0123-4567-89ab-ABCDEF01234',
      '0123abcd-0123-4567-89ab-ABCDEF0123456',
      'x0123abc-0123-4567-89ab-ABCDEF012345',
      '0123abcd_0123-4567-89ab-ABCDEF012345',
      'g123abcd-0123-4567-89ab-ABCDEF012345',
      42,
    ])
      expect(isUUID(bad), String(bad)).to.equal(false);
  });
});
