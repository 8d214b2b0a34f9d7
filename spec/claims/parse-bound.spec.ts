import { expect } from 'chai';
import { InvalidAllocationError, parseAllocation } from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

/** A valid allocation whose one task's driver config holds an array of `n` numbers. */
function withValues(n: number): unknown {
  const a = makeAlloc([mockTask('web')]);
  const json = JSON.parse(JSON.stringify(a)) as { job: { taskGroups: Array<{ tasks: Array<{ config: Record<string, unknown> }> }> } };
  json.job.taskGroups[0]!.tasks[0]!.config.big = new Array<number>(n).fill(0);
  return json;
}

describe('claim: parseAllocation reads at most 1,000,000 JSON values', function () {
  this.timeout(30_000);

  it('an allocation just under the bound parses; one just over it is refused, saying so', () => {
    const under = withValues(999_000);
    expect(() => parseAllocation(under)).to.not.throw();
    let err: unknown;
    try {
      parseAllocation(withValues(1_000_000));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InvalidAllocationError);
    expect((err as InvalidAllocationError).issues).to.include('(root): has more than 1000000 values');
  });
});
