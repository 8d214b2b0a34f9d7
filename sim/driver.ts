/**
 * The simulated task driver: berth's {@link Driver} interface over the {@link ProcessTable}.
 * Every call takes random virtual time; start can fail (before or after the process exists) or
 * hang until aborted; wait, stop and signal can fail; the process exists before `start` returns
 * and an aborted start kills it only a while later, as a real executor does.
 * One instance per simulated host: a crashed host's instance goes dead and answers nothing more.
 * @module
 */
import type { Driver, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from '../actors/drivers/driver.ts';
import { BerthError, DriverStartError, TaskNotRunningError, TaskNotStartedError } from '../model/errors.ts';
import type { Task } from '../model/types.ts';
import type { ProcessTable, SimExecutor } from './processes.ts';
import type { Rng } from './random.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

/** Fault rates of the simulated driver. */
export interface SimFaults {
  startFailEarly: number;
  startFailLate: number;
  startHang: number;
  waitFail: number;
  stopFail: number;
  signalFail: number;
  recoverFail: number;
  /**
   * Breaks the driver contract on purpose (specs of the checker and the shrinker): an aborted
   * start rejects and leaves its process running. 0 in every real run.
   */
  leakAbortedStart?: number;
}

/** Defaults: rare enough that most runs get somewhere, frequent enough to matter. */
export const DEFAULT_FAULTS: SimFaults = {
  startFailEarly: 0.05,
  startFailLate: 0.03,
  startHang: 0.04,
  waitFail: 0.02,
  stopFail: 0.05,
  signalFail: 0.05,
  recoverFail: 0.05,
};

/** Options of {@link createSimDriver}. */
export interface SimDriverOptions {
  sched: Scheduler;
  table: ProcessTable;
  rng: Rng;
  trace: Trace;
  /** Owner of this instance's timers (the host generation). */
  owner: string;
  faults?: SimFaults;
  /** Whether a task's check passes now (`exec` of a script check exits 0, else 2). Default: passes. */
  healthOf?: (allocId: string, task: string) => boolean;
}

/** The driver name jobs use for simulated tasks. */
export const SIM_DRIVER = 'sim';

/** Creates one host's simulated driver. `crash()` makes it go silent forever. */
export function createSimDriver(o: SimDriverOptions): Driver & { crash(): void } {
  const f = o.faults ?? DEFAULT_FAULTS;
  let dead = false;
  let calls = 0;
  /** Each call draws from its own stream, keyed by what it is about. */
  const rngFor = (what: string) => o.rng.fork(`${o.owner}:${what}:${calls++}`);
  const later = (ms: number, fn: () => void) => o.sched.at(ms, () => !dead && fn(), o.owner);
  const pidOf = (h: TaskHandle) => {
    // A handle saved before its start names its process through the executor of that start.
    const pid = h.pid ?? (h.starting ? o.table.executors.get(h.id)?.pid : undefined);
    if (typeof pid !== 'number') throw new BerthError('sim handle without pid');
    return pid;
  };
  /** Runs `fn` when `signal` aborts; returns the unsubscribe (a listener must not outlive its call). */
  const listening = new Set<() => void>();
  const aborted = (signal: AbortSignal, fn: () => void): (() => void) => {
    if (signal.aborted) {
      fn();
      return () => {};
    }
    signal.addEventListener('abort', fn, { once: true });
    const off = () => {
      listening.delete(off);
      signal.removeEventListener('abort', fn);
    };
    listening.add(off);
    return off;
  };

  return {
    name: SIM_DRIVER,
    // 'chroot' keeps the host's environment out of every start (copying process.env is most of
    // a simulated start's cost); the simulated task dir ignores the chroot map.
    capabilities: { fsIsolation: 'chroot', sendSignals: true, exec: true },
    validateConfig(_task: Task) {},
    /** A script check's command: a while of virtual time, then 0 when the task is healthy, else 2. */
    exec(handle: TaskHandle, _argv: string[], opts: ExecOptions = {}) {
      const r = rngFor(`exec:${handle.id}`);
      return new Promise<ExecResult>((resolve, reject) => {
        if (!o.table.procs.get(pidOf(handle))?.alive) return reject(new TaskNotRunningError());
        const off = opts.signal ? aborted(opts.signal, () => reject(opts.signal!.reason)) : () => {};
        later(r.int(1, 100), () => {
          off();
          if (opts.signal?.aborted) return;
          const ok = o.healthOf?.(handle.config.allocId, handle.config.taskName) ?? true;
          resolve({ stdout: Buffer.from(ok ? 'ok\n' : 'sick\n'), stderr: Buffer.alloc(0), exitCode: ok ? 0 : 2, signal: 0 });
        });
      });
    },
    crash() {
      dead = true;
      // The host is gone: drop its listeners, so nothing of it stays reachable.
      for (const off of [...listening]) off();
    },
    start(config: TaskConfig, signal: AbortSignal) {
      const r = rngFor(`start:${config.id}`);
      return new Promise<TaskHandle>((resolve, reject) => {
        let pid: number | undefined;
        let ex: SimExecutor | undefined;
        let settled = false;
        let off = () => {};
        const done = (fn: () => void) => {
          if (settled) return;
          settled = true;
          off();
          fn();
        };
        const handle = (): TaskHandle => ({ driver: SIM_DRIVER, id: config.id, config, startedAt: o.sched.now(), pid, state: { sim: true } });
        off = aborted(signal, () => {
          // A real executor notices the cancel late: it either kills what it started on its way
          // out and rejects, or hands back the task that already exists for berth to kill.
          later(r.int(0, 80), () => {
            if (ex && ex.pid === undefined) o.table.cancelLaunch(ex);
            if (pid !== undefined && o.table.procs.get(pid)?.alive && r.chance(0.5)) return done(() => resolve(handle()));
            if (pid !== undefined && !r.chance(f.leakAbortedStart ?? 0)) o.table.signal(pid, 'SIGKILL', 0);
            done(() => reject(signal.reason));
          });
        });
        if (r.chance(f.startHang)) return o.trace.log(`driver start ${config.id} hangs`);
        later(r.int(1, 40), () => {
          if (settled || signal.aborted) return;
          if (r.chance(f.startFailEarly)) return done(() => reject(new DriverStartError('sim: failed to launch executor', r.chance(0.7))));
          ex = o.table.launch(config.allocId, config.taskName, config.id, r.int(1, 40));
          ex.onSpawn.add((p) => {
            pid = p.pid;
            later(r.int(1, 150), () => {
              if (settled || signal.aborted) return;
              if (r.chance(f.startFailLate)) {
                o.table.signal(p.pid, 'SIGKILL', 0);
                return done(() => reject(new DriverStartError('sim: task exited during start handshake', r.chance(0.7))));
              }
              done(() => resolve(handle()));
            });
          });
        });
      });
    },
    wait(handle: TaskHandle, signal: AbortSignal) {
      const r = rngFor(`wait:${handle.id}`);
      return new Promise<ExitResult>((resolve, reject) => {
        let settled = false;
        const pid = pidOf(handle);
        let offExit = () => {};
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          offAbort();
          offExit();
          fn();
        };
        const offAbort = aborted(signal, () => {
          offExit();
          later(r.int(0, 10), () => settle(() => reject(signal.reason)));
        });
        if (signal.aborted) return;
        if (r.chance(f.waitFail)) {
          later(r.int(1, 500), () => !signal.aborted && settle(() => reject(new BerthError('sim: lost contact with executor'))));
          return;
        }
        offExit = o.table.onExit(pid, () => {
          later(
            r.int(0, 30),
            () => !signal.aborted && settle(() => resolve(o.table.procs.get(pid)?.exit ?? { exitCode: -1, signal: 0, err: 'task not found' })),
          );
        });
      });
    },
    stop(handle: TaskHandle, timeoutMs: number, killSignal: string) {
      const r = rngFor(`stop:${handle.id}`);
      return new Promise<void>((resolve, reject) => {
        const pid = pidOf(handle);
        later(r.int(1, 40), () => {
          if (r.chance(f.stopFail)) return reject(new BerthError('sim: executor did not answer'));
          o.table.signal(pid, killSignal, r.int(0, 200));
          const t = later(timeoutMs, () => o.table.signal(pid, 'SIGKILL', 0));
          o.table.onExit(pid, () => {
            o.sched.cancel(t);
            later(r.int(0, 20), resolve);
          });
        });
      });
    },
    signal(handle: TaskHandle, sig: string) {
      const r = rngFor(`signal:${handle.id}`);
      return new Promise<void>((resolve, reject) => {
        later(r.int(1, 30), () => {
          if (r.chance(f.signalFail)) return reject(new BerthError('sim: signal failed'));
          const p = o.table.procs.get(pidOf(handle));
          if (!p?.alive) return reject(new BerthError('task not found'));
          o.table.signal(p.pid, sig, r.int(0, 200));
          resolve();
        });
      });
    },
    destroy(handle: TaskHandle, force: boolean) {
      const r = rngFor(`destroy:${handle.id}`);
      return new Promise<void>((resolve) => {
        later(r.int(0, 30), () => {
          // A handle saved before a start that never spawned names no process: nothing to kill.
          const pid = handle.pid ?? (handle.starting ? o.table.executors.get(handle.id)?.pid : undefined);
          if (force && pid !== undefined) o.table.signal(pid, 'SIGKILL', 0);
          resolve();
        });
      });
    },
    recover(handle: TaskHandle) {
      const r = rngFor(`recover:${handle.id}`);
      return new Promise<TaskHandle | void>((resolve, reject) => {
        later(r.int(1, 80), () => {
          if (r.chance(f.recoverFail)) return reject(new BerthError('sim: executor unreachable'));
          if (handle.starting) {
            // Saved before its start: complete it from whatever the start left.
            const ex = o.table.executors.get(handle.id);
            if (!ex) return reject(new TaskNotStartedError(`sim: no executor for ${handle.id}`));
            const complete = (pid: number) => {
              const { starting: _s, ...rest } = handle;
              resolve({ ...rest, pid, state: { sim: true } });
            };
            if (ex.pid !== undefined) return complete(ex.pid);
            ex.onSpawn.add((p) => later(r.int(0, 20), () => complete(p.pid)));
            return;
          }
          const p = typeof handle.pid === 'number' ? o.table.procs.get(handle.pid) : undefined;
          if (!p || p.startId !== handle.id) return reject(new BerthError('task not found'));
          resolve();
        });
      });
    },
  };
}
