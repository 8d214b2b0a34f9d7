/**
 * Edges of the small policies that their main specs pass by: the exact state a check_restart
 * step leaves, HTTP and threshold boundaries, an empty kernel cpu list, a group without an
 * ephemeral_disk block.
 */
import { expect } from 'chai';
import { enforceableLimits, parseCpuList } from '../../../machines/policy/cgroup-limits.ts';
import { decideRestart, newRestartTracker } from '../../../machines/policy/restarts.ts';
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

  it('restart reasons: Nomad’s texts for each way the policy ends or delays', () => {
    const policy = { attempts: 1, intervalMs: 60_000, delayMs: 1000, mode: 'delay' as const };
    const t = newRestartTracker(0);
    const reason = (p: typeof policy, onSuccess: boolean, input: Parameters<typeof decideRestart>[2], tracker = t) =>
      (decideRestart({ policy: p, onSuccess }, tracker, input, 10, () => 0).decision as { reason: string }).reason;
    expect(reason({ ...policy, attempts: 0 }, true, { kind: 'exit', exitCode: 1, signal: 0 })).to.equal('Policy allows no restarts');
    expect(reason(policy, true, { kind: 'startError', recoverable: false, message: 'bad' })).to.equal('Error was unrecoverable');
    expect(reason(policy, false, { kind: 'exit', exitCode: 0, signal: 0 })).to.equal('Restart unnecessary as task terminated successfully');
    expect(reason(policy, true, { kind: 'exit', exitCode: 1, signal: 0 }, { count: 1, intervalStart: 0 })).to.equal(
      'Exceeded allowed attempts, applying a delay',
    );
  });

  it('cgroup limits: a memory floor needs the memory controller', () => {
    expect(enforceableLimits({ memoryLowBytes: 1 }, ['memory'])).to.deep.equal({ limits: { memoryLowBytes: 1 }, dropped: [] });
  });
});
