/**
 * Edges of the small policies that their main specs pass by: the exact state a check_restart
 * step leaves, HTTP and threshold boundaries, an empty kernel cpu list, a group without an
 * ephemeral_disk block.
 */
import { expect } from 'chai';
import { parseCpuList } from '../../../machines/policy/cgroup-limits.ts';
import { applyCheckRestart, type CheckRestartRule } from '../../../machines/policy/check-restart.ts';
import { applyThresholds, httpCheckStatus } from '../../../machines/policy/check-status.ts';
import { migrationPlan } from '../../../machines/policy/migration-plan.ts';

describe('policy edges', () => {
  const rule: CheckRestartRule = { limit: 3, graceMs: 10_000, ignoreWarnings: false, intervalMs: 5000 };

  it('check_restart: no limit keeps the state as it was; a passing result keeps the grace and forgets the failure', () => {
    const failing = { graceUntil: 10_000, unhealthySince: 12_000 };
    expect(applyCheckRestart({ ...rule, limit: 0 }, failing, 30_000, 'critical')).to.deep.equal({ state: failing, restart: false });
    expect(applyCheckRestart(rule, failing, 13_000, 'passing')).to.deep.equal({ state: { graceUntil: 10_000 }, restart: false });
  });

  it('HTTP check status: below 200 and from 400 up are critical, 2xx and 3xx pass, 429 warns', () => {
    const table: Array<[number, string]> = [
      [100, 'critical'],
      [199, 'critical'],
      [200, 'passing'],
      [399, 'passing'],
      [400, 'critical'],
      [429, 'warning'],
      [503, 'critical'],
    ];
    for (const [code, status] of table) expect(httpCheckStatus(code), String(code)).to.equal(status);
  });

  it('thresholds: a warning is taken at once and clears both counters', () => {
    expect(applyThresholds({ status: 'passing', successes: 3, failures: 0 }, 'warning', { failuresBeforeCritical: 3 })).to.deep.equal({
      status: 'warning',
      successes: 0,
      failures: 0,
    });
    expect(applyThresholds({ status: 'critical', successes: 0, failures: 2 }, 'warning', {})).to.deep.equal({ status: 'warning', successes: 0, failures: 0 });
  });

  it('cpu list: an empty cpuset file (a newline) and a fractional part name no core', () => {
    expect(parseCpuList('\n')).to.deep.equal([]);
    expect(parseCpuList('1.5,3')).to.deep.equal([3]);
  });

  it('migration: a group without an ephemeral_disk block migrates nothing', () => {
    expect(migrationPlan({ previousAllocId: 'p', restored: false, previousIsLocal: true })).to.deep.equal({
      kind: 'skip',
      previousAllocId: 'p',
      reason: 'ephemeral disk is neither sticky nor migrate',
    });
  });
});
