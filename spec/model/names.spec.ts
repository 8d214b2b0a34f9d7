/** Task names a cgroup, a path and an environment accept, refused at parse with the field path. */
import { expect } from 'chai';
import { parseAllocation } from '../../model/parse.ts';
import { InvalidAllocationError } from '../../model/errors.ts';
import { taskNameCgroupProblem } from '../../model/names.ts';
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
});
