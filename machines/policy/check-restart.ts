/**
 * Nomad's check_restart rule as a pure step: a check whose status is failing for long enough,
 * outside the grace period after the task (re)started, restarts its task.
 *
 * ```
 *  status ─ passing (or warning with ignore_warnings) ─► forget the failure, no restart
 *         ─ critical | warning ─► in grace (now < graceUntil)? no restart
 *                               ─► first failure: unhealthySince = now
 *                               ─► now ≥ unhealthySince + interval × (limit − 1)? restart
 * ```
 * With `limit = 1` the first counted failure restarts; `limit = 0` never restarts (Nomad's
 * `TriggersRestarts` is false then). The restart is a failure for the restart policy.
 * @module
 */
import type { CheckStatus } from './check-status.ts';

/** One watched check's state (plain data). */
export interface CheckRestartState {
  /** When counted failures started; undefined while healthy. */
  unhealthySince?: number;
  /** Failures before this time are ignored (task start + grace). */
  graceUntil: number;
}

/** The check_restart settings of one check, durations in ms. */
export interface CheckRestartRule {
  limit: number;
  graceMs: number;
  ignoreWarnings: boolean;
  intervalMs: number;
}

/** A fresh state for a task (re)started at `startedAt`. */
export function initialCheckRestart(rule: CheckRestartRule, startedAt: number): CheckRestartState {
  return { graceUntil: startedAt + rule.graceMs };
}

/** Applies one check result at `now`; `restart` says the task must be restarted now. */
export function applyCheckRestart(
  rule: CheckRestartRule,
  state: CheckRestartState,
  now: number,
  status: CheckStatus,
): { state: CheckRestartState; restart: boolean } {
  if (rule.limit <= 0) return { state, restart: false };
  const failing = status === 'critical' || (status === 'warning' && !rule.ignoreWarnings);
  if (!failing) return { state: { graceUntil: state.graceUntil }, restart: false };
  if (now < state.graceUntil) return { state, restart: false };
  const since = state.unhealthySince ?? now;
  const next = { ...state, unhealthySince: since };
  return { state: next, restart: now >= since + rule.intervalMs * (rule.limit - 1) };
}

/** Nomad's "Restart Signaled" reason for a check_restart. */
export const checkRestartReason = (checkName: string) => `healthcheck: check ${JSON.stringify(checkName)} unhealthy`;
