/**
 * `mock_driver`: Nomad's mock driver, honouring its task config (`run_for`, `exit_code`,
 * `exit_signal`, `exit_err_msg`, `start_error`, `start_error_recoverable`, `start_block_for`,
 * `kill_after`, `signal_error`, `stdout_string`/`stdout_repeat`/`stdout_repeat_duration` and the
 * stderr equivalents). Its timings are real, through an injectable {@link Clock}.
 * @module
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, sleep, type Clock } from '../../model/clock.ts';
import { toMs } from '../../model/duration.ts';
import { BerthError, DriverConfigError, DriverStartError } from '../../model/errors.ts';
import type { Task } from '../../model/types.ts';
import type { Driver, ExitResult, TaskConfig, TaskHandle } from './driver.ts';

/** The mock's parsed task config. */
export interface MockTaskConfig {
  runForMs: number;
  exitCode: number;
  exitSignal: number;
  exitErrMsg?: string;
  startError?: string;
  startErrorRecoverable: boolean;
  startBlockForMs: number;
  killAfterMs: number;
  signalError?: string;
  stdout?: { text: string; repeat: number; everyMs: number };
  stderr?: { text: string; repeat: number; everyMs: number };
}

/** Parses and validates a mock task config. @throws DriverConfigError */
export function parseMockConfig(config: Record<string, unknown>): MockTaskConfig {
  const problems: string[] = [];
  const dur = (k: string) => {
    try {
      return toMs(config[k] === '' ? 0 : config[k], k);
    } catch (e) {
      problems.push((e as Error).message);
      return 0;
    }
  };
  const num = (k: string) => {
    const v = config[k];
    if (v === undefined) return 0;
    if (typeof v !== 'number' || !Number.isInteger(v)) problems.push(`${k}: must be an integer`);
    return typeof v === 'number' ? v : 0;
  };
  const str = (k: string) => {
    const v = config[k];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') problems.push(`${k}: must be a string`);
    return typeof v === 'string' ? v : undefined;
  };
  const stream = (p: 'stdout' | 'stderr') => {
    const text = str(`${p}_string`);
    return text === undefined ? undefined : { text, repeat: num(`${p}_repeat`), everyMs: dur(`${p}_repeat_duration`) };
  };
  const out: MockTaskConfig = {
    runForMs: dur('run_for'),
    exitCode: num('exit_code'),
    exitSignal: num('exit_signal'),
    exitErrMsg: str('exit_err_msg'),
    startError: str('start_error'),
    startErrorRecoverable: config.start_error_recoverable === true,
    startBlockForMs: dur('start_block_for'),
    killAfterMs: dur('kill_after'),
    signalError: str('signal_error'),
    stdout: stream('stdout'),
    stderr: stream('stderr'),
  };
  if (problems.length) throw new DriverConfigError(problems.join('; '));
  return out;
}

interface MockTask {
  cfg: MockTaskConfig;
  result?: ExitResult;
  exited: Promise<ExitResult>;
  finish: (r: ExitResult) => void;
  timers: Set<unknown>;
}

/** Options for {@link createMockDriver}. */
export interface MockDriverOptions {
  clock?: Clock;
  /** Driver name (default 'mock_driver'). */
  name?: string;
}

/** Creates a mock driver. */
export function createMockDriver(opts: MockDriverOptions = {}): Driver & {
  /** How many tasks it is running now. */
  running(): number;
} {
  const clock = opts.clock ?? realClock;
  const tasks = new Map<string, MockTask>();
  const name = opts.name ?? 'mock_driver';

  const schedule = (t: MockTask, ms: number, fn: () => void) => {
    const h = clock.setTimeout(() => {
      t.timers.delete(h);
      fn();
    }, ms);
    (h as { unref?: () => void })?.unref?.();
    t.timers.add(h);
  };

  const exitWith = (t: MockTask) => {
    if (t.result) return;
    const r: ExitResult = { exitCode: t.cfg.exitCode, signal: t.cfg.exitSignal, ...(t.cfg.exitErrMsg ? { err: t.cfg.exitErrMsg } : {}) };
    t.result = r;
    for (const h of t.timers) clock.clearTimeout(h);
    t.timers.clear();
    t.finish(r);
  };

  const writeLogs = (t: MockTask, config: TaskConfig) => {
    for (const stream of ['stdout', 'stderr'] as const) {
      const s = t.cfg[stream];
      if (!s) continue;
      const file = join(config.allocDir.logsDir, `${config.taskName}.${stream}.0`);
      const write = () => appendFile(file, s.text).catch(() => {});
      void write();
      let left = s.repeat;
      const again = () => {
        if (left-- <= 0 || t.result) return;
        void write();
        schedule(t, s.everyMs, again);
      };
      if (left > 0) schedule(t, s.everyMs, again);
    }
  };

  const start = (config: TaskConfig, cfg: MockTaskConfig, runForMs: number, startedAt: number): TaskHandle => {
    let finish!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((r) => (finish = r));
    const t: MockTask = { cfg, exited, finish, timers: new Set() };
    tasks.set(config.id, t);
    schedule(t, runForMs, () => exitWith(t));
    writeLogs(t, config);
    return { driver: name, id: config.id, config, startedAt, state: { runForMs: cfg.runForMs } };
  };

  const get = (handle: TaskHandle) => {
    const t = tasks.get(handle.id);
    if (!t) throw new BerthError('task not found');
    return t;
  };

  return {
    name,
    capabilities: { fsIsolation: 'none', sendSignals: true },
    running: () => [...tasks.values()].filter((t) => !t.result).length,
    validateConfig(task: Task) {
      parseMockConfig(task.config);
    },
    async start(config, signal) {
      const cfg = parseMockConfig(config.task.config);
      if (cfg.startBlockForMs > 0) await sleep(cfg.startBlockForMs, signal, clock);
      if (cfg.startError) throw new DriverStartError(cfg.startError, cfg.startErrorRecoverable);
      if (signal.aborted) throw signal.reason;
      return start(config, cfg, cfg.runForMs, clock.now());
    },
    async wait(handle, signal) {
      const t = get(handle);
      if (t.result) return t.result;
      if (signal.aborted) throw signal.reason;
      return new Promise<ExitResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        void t.exited.then((r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        });
      });
    },
    async stop(handle) {
      const t = tasks.get(handle.id);
      if (!t || t.result) return;
      if (t.cfg.killAfterMs > 0) {
        // The task may exit by itself before kill_after elapses.
        await new Promise<void>((resolve) => {
          schedule(t, t.cfg.killAfterMs, resolve);
          void t.exited.then(() => resolve());
        });
      }
      exitWith(t);
    },
    async signal(handle) {
      const t = get(handle);
      if (t.result) throw new BerthError('Task not running');
      if (t.cfg.signalError) throw new BerthError(t.cfg.signalError);
    },
    async destroy(handle, force) {
      const t = tasks.get(handle.id);
      if (!t) return;
      if (!t.result) {
        if (!force) throw new BerthError('cannot destroy running task');
        exitWith(t);
      }
      tasks.delete(handle.id);
    },
    async recover(handle) {
      if (tasks.has(handle.id)) return;
      const cfg = parseMockConfig(handle.config.task.config);
      const left = Math.max(0, cfg.runForMs - (clock.now() - handle.startedAt));
      start(handle.config, cfg, left, handle.startedAt);
    },
  };
}
