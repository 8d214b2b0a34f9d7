import { expect } from 'chai';
import { InvalidAllocationError, parseAllocation } from '../../model/index.ts';
import { makeAlloc } from '../support/fixtures.ts';

/**
 * A valid allocation whose one raw_exec task has `n` empty arguments (a key the driver's config
 * schema accepts, so only the value count can refuse it).
 */
function withValues(n: number): unknown {
  const a = makeAlloc([{ name: 'web', driver: 'raw_exec', config: { command: '/bin/true', args: new Array<string>(n).fill('') } }]);
  return JSON.parse(JSON.stringify(a)) as unknown;
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
