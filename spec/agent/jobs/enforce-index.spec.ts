/** Nomad's check-and-set on a job's modify index: the three refusals of a register, the scale's one. */
import { expect } from 'chai';
import { enforceIndexRefusal, scaleIndexRefusal } from '../../../agent/jobs/enforce-index.ts';

describe('agent: enforce index (pure)', () => {
  it("a register's index against the job's: 0 for a new job, the current one for an existing job", () => {
    const cases: Array<[current: number | undefined, want: number, refusal: ReturnType<typeof enforceIndexRefusal>]> = [
      [undefined, 0, undefined],
      [undefined, 7, 'missing'],
      [7, 0, 'exists'],
      [7, 7, undefined],
      [7, 6, 'conflict'],
      [7, 8, 'conflict'],
    ];
    for (const [current, want, refusal] of cases) expect(enforceIndexRefusal(current, want), `${current} / ${want}`).to.equal(refusal);
  });

  it("a scale's index: 0 checks nothing, another must be the job's", () => {
    expect(scaleIndexRefusal(7, 0)).to.equal(undefined);
    expect(scaleIndexRefusal(7, 7)).to.equal(undefined);
    expect(scaleIndexRefusal(7, 6)).to.equal('conflict');
    expect(scaleIndexRefusal(7, 8)).to.equal('conflict');
  });
});
