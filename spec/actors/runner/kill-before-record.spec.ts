/**
 * A task whose process may outlive what berth knows of it (its wait failed: the executor is lost)
 * is killed with SIGKILL, retried on Nomad's kill back-off, before its exit goes on record: a
 * task is never reported dead, or restarted, beside its live process.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { Clock } from '../../../model/clock.ts';
import type { Driver, TaskHandle } from '../../../actors/drivers/driver.ts';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import { stopWithRetry } from '../../../actors/runner/task-actors.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

/** True while `pid` is a live, non-zombie process. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
  } catch {
    return false;
  }
}

/** A clock whose timers fire at once, keeping the delays asked for. */
function instantClock(delays: number[]): Clock {
  return {
    now: () => 0,
    setTimeout: (fn, ms) => {
      delays.push(ms);
      queueMicrotask(fn);
      return undefined;
    },
    clearTimeout: () => {},
  };
}

/** A driver whose stop fails with `errors` in turn, then succeeds; the signals it was asked for kept. */
function failingStops(errors: string[], signals: string[]): Driver {
  return {
    stop: async (_h: TaskHandle, _t: number, sig: string) => {
      signals.push(sig);
      const e = errors.shift();
      if (e !== undefined) throw new Error(e);
    },
  } as unknown as Driver;
}

const handle: TaskHandle = { driver: 'x', id: 'h', config: {} as TaskHandle['config'], startedAt: 0, state: {} };

describe('runner: kill before the exit goes on record', function () {
  this.timeout(20_000);
  const newClient = useTempClients();

  it("stopWithRetry retries a failing stop on Nomad's back-off, min(4^i x 5 s, 2 min), 5 attempts at most", async () => {
    const delays: number[] = [];
    const signals: string[] = [];
    await stopWithRetry(failingStops(['busy', 'busy', 'busy', 'busy', 'busy', 'busy'], signals), handle, 0, 'SIGKILL', instantClock(delays));
    expect(signals).to.deep.equal(['SIGKILL', 'SIGKILL', 'SIGKILL', 'SIGKILL', 'SIGKILL']);
    expect(delays).to.deep.equal([5000, 20000, 80000, 120000]);
  });

  it('stopWithRetry ends at the first stop that works, or when the task is not found', async () => {
    const delays: number[] = [];
    const signals: string[] = [];
    await stopWithRetry(failingStops(['busy'], signals), handle, 0, 'SIGTERM', instantClock(delays));
    expect(signals).to.have.length(2);
    await stopWithRetry(failingStops(['task not found', 'busy'], signals), handle, 0, 'SIGTERM', instantClock(delays));
    expect(signals).to.have.length(3);
    expect(delays).to.deep.equal([5000]);
  });

  it('a task whose wait fails is SIGKILLed, its process gone before its exit is on record', async () => {
    const inner = createRawExecDriver();
    const stops: string[] = [];
    const pids: number[] = [];
    const driver: Driver = {
      ...inner,
      name: 'lost_exec',
      // The handle names this driver, so the client's wait and stop come here.
      start: async (config, signal) => ({ ...(await inner.start(config, signal)), driver: 'lost_exec' }),
      async wait(h, signal) {
        if (pids.length === 0) {
          pids.push(h.pid!);
          throw new Error('executor lost');
        }
        return inner.wait(h, signal);
      },
      async stop(h, timeoutMs, sig) {
        stops.push(sig);
        return inner.stop(h, timeoutMs, sig);
      },
    };
    const client = newClient({ drivers: { lost_exec: driver } });
    const alloc = makeAlloc([{ name: 'web', driver: 'lost_exec', config: { command: '/bin/sleep', args: ['60'] } }], {
      group: { restartPolicy: { attempts: 0, intervalMs: 600_000, delayMs: 0, mode: 'fail' } },
    });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => (a.taskStates?.web?.events ?? []).some((e) => e.type === 'Terminated'));
    expect(pids).to.have.length(1);
    expect(alive(pids[0]!)).to.equal(false);
    expect(stops[0]).to.equal('SIGKILL');
    const terminated = r.alloc().taskStates!.web!.events.find((e) => e.type === 'Terminated')!;
    expect(terminated.details.exit_message ?? terminated.message ?? '').to.match(/failed to wait for task: executor lost/);
  });
});
