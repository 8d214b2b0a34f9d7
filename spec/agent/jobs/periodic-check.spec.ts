/** Nomad's validation of a job's periodic block, in its words (pure). */
import { expect } from 'chai';
import { periodicProblem } from '../../../agent/jobs/periodic-check.ts';

const NOW = Date.UTC(2026, 11, 8, 12, 0, 0);

describe('agent: the periodic block check (pure)', () => {
  it('no block, a null one, or a launched child: nothing to check', () => {
    expect(periodicProblem({ ID: 'j' }, NOW)).to.equal(undefined);
    expect(periodicProblem({ ID: 'j', Periodic: null }, NOW)).to.equal(undefined);
    expect(periodicProblem({ ID: 'j/periodic-1', ParentID: 'j', Periodic: { Spec: 'not cron' } }, NOW)).to.equal(undefined);
  });

  it('a good expression, in Spec or Specs, with or without a known time zone', () => {
    expect(periodicProblem({ ID: 'j', Periodic: { Spec: '*/5 * * * *' } }, NOW)).to.equal(undefined);
    expect(periodicProblem({ ID: 'j', Periodic: { Specs: ['0 3 * * *', '0 15 * * *'], TimeZone: 'Europe/Paris' } }, NOW)).to.equal(undefined);
  });

  it('refuses no expression, an unknown time zone and a bad expression, each in Nomad’s words', () => {
    expect(periodicProblem({ ID: 'j', Periodic: {} }, NOW)).to.equal('Invalid periodic job: must specify a cron expression (cron or crons)');
    expect(periodicProblem({ ID: 'j', Periodic: { Specs: [] } }, NOW)).to.equal('Invalid periodic job: must specify a cron expression (cron or crons)');
    expect(periodicProblem({ ID: 'j', Periodic: { Spec: '* * * * *', TimeZone: 'Mars/Olympus' } }, NOW)).to.equal(
      'Invalid periodic job: Invalid time zone "Mars/Olympus": unknown time zone Mars/Olympus',
    );
    const bad = periodicProblem({ ID: 'j', Periodic: { Spec: '61 * * * *' } }, NOW);
    expect(bad).to.match(/^Invalid periodic job: Invalid cron spec "61 \* \* \* \*": /);
    // One bad expression among good ones is still refused.
    expect(periodicProblem({ ID: 'j', Periodic: { Specs: ['0 3 * * *', 'nope'] } }, NOW)).to.match(/^Invalid periodic job: Invalid cron spec "nope": /);
  });
});
