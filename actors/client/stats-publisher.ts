/**
 * Publishes every running task's usage as a `task.stats` bus message every `intervalMs` (the
 * host turns it on with `ClientOptions.statsIntervalMs`). One chained timer on the client's
 * clock; a sample never overlaps the previous one.
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { AllocRunner } from './types.ts';
import { errorText } from '../../model/error-text.ts';

/** Starts publishing; call the returned function to stop (it waits for a sample in flight). */
export function startStatsPublisher(opts: { bus: Bus; clock: Clock; intervalMs: number; runners: () => AllocRunner[] }): () => Promise<void> {
  let stopped = false;
  let timer: unknown;
  let inFlight: Promise<void> = Promise.resolve();
  const sample = async () => {
    for (const r of opts.runners()) {
      if (stopped) return;
      if (r.state() !== 'running') continue;
      try {
        const usage = await r.stats();
        for (const [task, u] of Object.entries(usage.tasks)) {
          opts.bus.publish('task.stats', { allocId: r.allocId, task, usage: u.resourceUsage, timestamp: u.timestamp });
        }
      } catch (e) {
        opts.bus.publish('client.error', { allocId: r.allocId, error: `stats: ${errorText(e)}` });
      }
    }
  };
  const tick = () => {
    inFlight = sample().finally(() => {
      if (!stopped) timer = opts.clock.setTimeout(tick, opts.intervalMs);
    });
  };
  timer = opts.clock.setTimeout(tick, opts.intervalMs);
  return async () => {
    stopped = true;
    opts.clock.clearTimeout(timer);
    await inFlight;
  };
}
