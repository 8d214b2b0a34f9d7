/**
 * What a check result means (pure): Nomad's check statuses as Consul names them, an HTTP answer
 * mapped to one, and the `success_before_passing` / `failures_before_critical` thresholds that
 * hold a status back until it has repeated.
 * @module
 */

/** A check's status, as reported on the bus and in the catalog. */
export type CheckStatus = 'passing' | 'warning' | 'critical';

/** HTTP checks: 2xx and 3xx pass (redirects are not followed), 429 warns, anything else is critical. */
export function httpCheckStatus(code: number): CheckStatus {
  if (code >= 200 && code < 400) return 'passing';
  if (code === 429) return 'warning';
  return 'critical';
}

/** Script checks: exit 0 passes, exit 1 warns, any other end is critical. */
export function scriptCheckStatus(exitCode: number): CheckStatus {
  if (exitCode === 0) return 'passing';
  if (exitCode === 1) return 'warning';
  return 'critical';
}

/** Consecutive-result counters of one check (plain data). */
export interface CheckThresholdState {
  status: CheckStatus;
  successes: number;
  failures: number;
}

/**
 * Applies one probe result: a passing result becomes the status after `successBeforePassing`
 * in a row, a critical one after `failuresBeforeCritical` in a row (both default 1: at once);
 * a warning is taken at once.
 */
export function applyThresholds(
  s: CheckThresholdState,
  result: CheckStatus,
  opts: { successBeforePassing?: number; failuresBeforeCritical?: number },
): CheckThresholdState {
  if (result === 'passing') {
    const successes = s.successes + 1;
    return { status: successes >= Math.max(1, opts.successBeforePassing ?? 0) ? 'passing' : s.status, successes, failures: 0 };
  }
  if (result === 'critical') {
    const failures = s.failures + 1;
    return { status: failures >= Math.max(1, opts.failuresBeforeCritical ?? 0) ? 'critical' : s.status, successes: 0, failures };
  }
  return { status: 'warning', successes: 0, failures: 0 };
}
