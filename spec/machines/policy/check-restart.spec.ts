import { expect } from 'chai';
import { applyCheckRestart, checkRestartReason, initialCheckRestart, type CheckRestartRule } from '../../../machines/policy/check-restart.ts';
import { applyThresholds, httpCheckStatus, scriptCheckStatus } from '../../../machines/policy/check-status.ts';
import type { CheckStatus } from '../../../machines/policy/check-status.ts';

/** Feeds statuses at the given times; returns the times a restart fired. */
function run(rule: CheckRestartRule, startedAt: number, steps: [number, CheckStatus][]): number[] {
  let s = initialCheckRestart(rule, startedAt);
  const fired: number[] = [];
  for (const [t, status] of steps) {
    const r = applyCheckRestart(rule, s, t, status);
    s = r.state;
    if (r.restart) fired.push(t);
  }
  return fired;
}

describe('policy: check_restart (Nomad restarter.apply)', () => {
  const rule: CheckRestartRule = { limit: 3, graceMs: 10_000, ignoreWarnings: false, intervalMs: 5000 };

  it('restarts once a failure lasted interval x (limit - 1), counting from the first failure after grace', () => {
    expect(
      run(rule, 0, [
        [5000, 'critical'],
        [10_000, 'critical'],
        [15_000, 'critical'],
        [20_000, 'critical'],
      ]),
    ).to.deep.equal([20_000]);
  });

  it('a passing result forgets the failure; failures in grace do not count', () => {
    expect(
      run(rule, 0, [
        [10_000, 'critical'],
        [15_000, 'passing'],
        [20_000, 'critical'],
        [25_000, 'critical'],
      ]),
    ).to.deep.equal([]);
    expect(
      run(rule, 0, [
        [1000, 'critical'],
        [9999, 'critical'],
        [10_000, 'critical'],
      ]),
    ).to.deep.equal([]);
  });

  it('limit 1 restarts at the first counted failure; limit 0 never; warnings count unless ignored', () => {
    expect(run({ ...rule, limit: 1 }, 0, [[10_000, 'warning']])).to.deep.equal([10_000]);
    expect(run({ ...rule, limit: 1, ignoreWarnings: true }, 0, [[10_000, 'warning']])).to.deep.equal([]);
    expect(
      run({ ...rule, limit: 0 }, 0, [
        [10_000, 'critical'],
        [99_000, 'critical'],
      ]),
    ).to.deep.equal([]);
  });

  it("says Nomad's reason", () => {
    expect(checkRestartReason('api-health')).to.equal('healthcheck: check "api-health" unhealthy');
  });
});

describe('policy: check statuses', () => {
  it('http: 2xx and 3xx pass, 429 warns, the rest are critical; script: 0 passes, 1 warns', () => {
    expect([200, 204, 301, 399, 429, 404, 500].map(httpCheckStatus)).to.deep.equal([
      'passing',
      'passing',
      'passing',
      'passing',
      'warning',
      'critical',
      'critical',
    ]);
    expect([0, 1, 2, 137].map(scriptCheckStatus)).to.deep.equal(['passing', 'warning', 'critical', 'critical']);
  });

  it('success_before_passing and failures_before_critical hold a status back until it repeats', () => {
    let s = { status: 'critical' as CheckStatus, successes: 0, failures: 0 };
    const opts = { successBeforePassing: 2, failuresBeforeCritical: 3 };
    const seen: CheckStatus[] = [];
    for (const r of ['passing', 'passing', 'critical', 'critical', 'critical', 'passing'] as CheckStatus[]) {
      s = applyThresholds(s, r, opts);
      seen.push(s.status);
    }
    expect(seen).to.deep.equal(['critical', 'passing', 'passing', 'passing', 'critical', 'critical']);
  });
});
