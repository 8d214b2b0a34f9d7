/**
 * The one retry step of everything that asks the servers (a remote watcher, a node lookup):
 * Nomad's `getRemoteRetryIntv`, a wait of `baseMs + random() * staggerMs` on the clock, told to
 * `onRetry` first, cancelled by `signal`.
 * @module
 */
import { realClock, sleep, type Clock } from '../../model/clock.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './types.ts';

/** How a server-asking loop retries. */
export interface RetryOptions {
  signal: AbortSignal;
  /** Default {@link DEFAULT_RETRY} (30 s + [0, 30 s)). */
  retry?: RetryPolicy;
  clock?: Clock;
  random?: () => number;
  /** Called before each retry wait with the reason and the delay. */
  onRetry?: (error: string, delayMs: number) => void;
}

/** Waits one retry delay after a failure `reason`; rejects with `signal.reason` when cancelled. */
export async function backOff(opts: RetryOptions, reason: string): Promise<void> {
  const { retry = DEFAULT_RETRY, clock = realClock, random = Math.random } = opts;
  const delayMs = retry.baseMs + random() * retry.staggerMs;
  opts.onRetry?.(reason, delayMs);
  await sleep(delayMs, opts.signal, clock);
}
