/**
 * `mock_driver`: Nomad's mock driver, honouring its task config (`run_for`, `exit_code`,
 * `exit_signal`, `exit_err_msg`, `start_error`, `start_error_recoverable`, `start_block_for`,
 * `kill_after`, `signal_error`, `plugin_exit_after`, `exec_command { ... }`,
 * `stdout_string`/`stdout_repeat`/`stdout_repeat_duration` and the stderr equivalents). Its
 * timings are real, through an injectable {@link Clock}.
 *
 * ```
 *  start ─► run: write stdout/stderr (then repeat), wait run_for ─► exit (exit_code, signal, msg)
 *             │ stop (after kill_after) ─► exit now, output stops
 *             └ plugin_exit_after ─► { err: 'plugin is shut down', pluginShutdown } ─► recover ─► run
 * ```
 * As in Nomad, the exit waits for the output to be written (all repeats, unless killed), and
 * output goes through the same rotating log files the real drivers write
 * (`<alloc>/alloc/logs/<task>.stdout.N`, `task.logs` limits).
 * @module
 */
import { driverConfigIssues } from '../../model/schema/driver-config.ts';
import { realClock, sleep, type Clock } from '../../model/clock.ts';
import { toMs } from '../../model/duration.ts';
import { BerthError, DriverConfigError, DriverStartError, TaskNotStartedError } from '../../model/errors.ts';
import type { Task } from '../../model/types.ts';
import type { Driver, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from './driver.ts';
import { FileRotator } from './logs/rotator.mjs';
import { errorText } from '../../model/error-text.ts';

/** Nomad's `ErrPluginShutdown` text: the driver plugin went away under a running task. */
export const PLUGIN_SHUTDOWN_ERROR = 'plugin is shut down';

/** What one mock command does: the task itself, or its `exec_command`. */
export interface MockCommand {
  runForMs: number;
  exitCode: number;
  exitSignal: number;
  exitErrMsg?: string;
  signalError?: string;
  stdout?: { text: string; repeat: number; everyMs: number };
  stderr?: { text: string; repeat: number; everyMs: number };
}

/** The mock's parsed task config. */
export interface MockTaskConfig extends MockCommand {
  startError?: string;
  startErrorRecoverable: boolean;
  startBlockForMs: number;
  killAfterMs: number;
  /** After this long the wait reports a plugin shutdown (0: never). */
  pluginExitAfterMs: number;
  /** What `exec` runs. */
  execCommand?: MockCommand;
}

/** Parses and validates a mock task config. @throws DriverConfigError */
export function parseMockConfig(config: Record<string, unknown>): MockTaskConfig {
  // The one schema first (unknown keys, types); then the values below.
  const problems: string[] = driverConfigIssues('mock_driver', config);
  if (problems.length) throw new DriverConfigError(problems.join('; '));
  const fields = (src: Record<string, unknown>, prefix: string) => {
    const dur = (k: string) => {
      try {
        return toMs(src[k] === '' ? 0 : src[k], prefix + k);
      } catch (e) {
        problems.push(errorText(e));
        return 0;
      }
    };
    const num = (k: string) => {
      const v = src[k];
      if (v === undefined) return 0;
      if (typeof v !== 'number' || !Number.isInteger(v)) problems.push(`${prefix}${k}: must be an integer`);
      return typeof v === 'number' ? v : 0;
    };
    const str = (k: string) => {
      const v = src[k];
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string') problems.push(`${prefix}${k}: must be a string`);
      return typeof v === 'string' ? v : undefined;
    };
    const stream = (p: 'stdout' | 'stderr') => {
      const text = str(`${p}_string`);
      return text === undefined ? undefined : { text, repeat: num(`${p}_repeat`), everyMs: dur(`${p}_repeat_duration`) };
    };
    const command: MockCommand = {
      runForMs: dur('run_for'),
      exitCode: num('exit_code'),
      exitSignal: num('exit_signal'),
      exitErrMsg: str('exit_err_msg'),
      signalError: str('signal_error'),
      stdout: stream('stdout'),
      stderr: stream('stderr'),
    };
    return { command, dur, str };
  };
  const { command, dur, str } = fields(config, '');
  let execCommand: MockCommand | undefined;
  const rawExec = Array.isArray(config.exec_command) && config.exec_command.length === 1 ? config.exec_command[0] : config.exec_command;
  if (rawExec !== undefined) {
    if (typeof rawExec !== 'object' || rawExec === null || Array.isArray(rawExec)) problems.push('exec_command: must be a block');
    else execCommand = fields(rawExec as Record<string, unknown>, 'exec_command.').command;
  }
  const out: MockTaskConfig = {
    ...command,
    startError: str('start_error'),
    startErrorRecoverable: config.start_error_recoverable === true,
    startBlockForMs: dur('start_block_for'),
    killAfterMs: dur('kill_after'),
    pluginExitAfterMs: dur('plugin_exit_after'),
    ...(execCommand ? { execCommand } : {}),
  };
  if (problems.length) throw new DriverConfigError(problems.join('; '));
  return out;
}

/** Where a command's output goes. */
interface Sink {
  write(text: string): void;
  /** Resolves once everything written so far is out; closes the sink. */
  close(): Promise<void>;
}

/** A running mock command. */
interface Run {
  /** Resolves once with how it ended. */
  done: Promise<ExitResult>;
  /** Ends it now (a kill): output stops, the configured exit result is reported. */
  cancel(): void;
  /** Ends it with an output error as its exit result (Nomad: a log it cannot write). */
  fail(err: unknown): void;
  readonly finished: boolean;
}

/**
 * Which of the mock driver's timers keep the host process alive. A mock task lives in the host,
 * so while one runs (or a kill waits on `kill_after`) its timers are ref'd, as a real child
 * process would be: a script that awaits a mock-driver alloc does not exit before it ends.
 * `release()` (the client's shutdown) unrefs every timer, now and from then on.
 */
interface TimerHold {
  add(handle: unknown): void;
  drop(handle: unknown): void;
  release(): void;
}

type Unrefable = { unref?: () => void };

/** A hold for timers that never keeps the host alive (runs outside a driver, e.g. in tests). */
const HOLD_NOTHING: TimerHold = {
  add: (h) => (h as Unrefable | null)?.unref?.(),
  drop: () => {},
  release: () => {},
};

/** A driver's hold: timers stay ref'd until `release()`. */
function timerHold(): TimerHold {
  const live = new Set<unknown>();
  let released = false;
  return {
    add(h) {
      if (released) (h as Unrefable | null)?.unref?.();
      else live.add(h);
    },
    drop(h) {
      live.delete(h);
    },
    release() {
      released = true;
      for (const h of live) (h as Unrefable | null)?.unref?.();
      live.clear();
    },
  };
}

/**
 * Runs one mock command as Nomad's `runCommand` does: writes each output string, repeats it,
 * and exits once `runForMs` elapsed and the output is written; a cancel ends both at once;
 * `pluginExitAfterMs` ends it with a plugin shutdown instead.
 */
function runCommand(
  clock: Clock,
  cmd: MockCommand,
  sinks: { stdout: Sink; stderr: Sink },
  runForMs: number,
  pluginExitAfterMs: number,
  hold: TimerHold = HOLD_NOTHING,
): Run {
  const timers = new Set<unknown>();
  let finished = false;
  let resolve!: (r: ExitResult) => void;
  const done = new Promise<ExitResult>((r) => (resolve = r));
  let outputsLeft = 0;
  let runForElapsed = false;
  let writeError: string | undefined;
  const schedule = (ms: number, fn: () => void) => {
    const h = clock.setTimeout(() => {
      timers.delete(h);
      hold.drop(h);
      fn();
    }, ms);
    hold.add(h);
    timers.add(h);
  };
  const finish = (r: ExitResult) => {
    if (finished) return;
    finished = true;
    for (const h of timers) {
      clock.clearTimeout(h);
      hold.drop(h);
    }
    timers.clear();
    void Promise.all([sinks.stdout.close(), sinks.stderr.close()]).then(() =>
      resolve(writeError && !r.pluginShutdown ? { exitCode: 0, signal: 0, err: writeError } : r),
    );
  };
  const normal = (): ExitResult => ({ exitCode: cmd.exitCode, signal: cmd.exitSignal, ...(cmd.exitErrMsg ? { err: cmd.exitErrMsg } : {}) });
  const maybeExit = () => {
    if (runForElapsed && outputsLeft === 0) finish(normal());
  };
  const onWriteError = (e: unknown) => {
    writeError ??= errorText(e);
    finish(normal());
  };
  for (const name of ['stdout', 'stderr'] as const) {
    const s = cmd[name];
    if (!s) continue;
    const sink = sinks[name];
    const write = () => {
      try {
        sink.write(s.text);
      } catch (e) {
        onWriteError(e);
      }
    };
    write();
    let left = s.repeat;
    if (left <= 0) continue;
    outputsLeft++;
    const again = () => {
      if (finished) return;
      write();
      if (--left > 0) schedule(s.everyMs, again);
      else {
        outputsLeft--;
        maybeExit();
      }
    };
    schedule(s.everyMs, again);
  }
  schedule(Math.max(0, runForMs), () => {
    runForElapsed = true;
    maybeExit();
  });
  if (pluginExitAfterMs > 0) schedule(pluginExitAfterMs, () => finish({ exitCode: 0, signal: 0, err: PLUGIN_SHUTDOWN_ERROR, pluginShutdown: true }));
  return {
    done,
    cancel: () => finish(normal()),
    fail: onWriteError,
    get finished() {
      return finished;
    },
  };
}

/** A sink over rotating log files, writes kept in order. */
function rotatingSink(config: TaskConfig, stream: 'stdout' | 'stderr', onError: (e: unknown) => void): Sink {
  const rot = new FileRotator({
    dir: config.allocDir.logsDir,
    baseName: `${config.taskName}.${stream}`,
    maxFiles: config.logs.maxFiles,
    fileSize: Math.max(1, Math.floor(config.logs.maxFileSizeMB * 1024 * 1024)),
  });
  let chain: Promise<void> | undefined;
  let closed = false;
  return {
    write(text) {
      if (closed) return;
      if (!chain) {
        rot.open(); // lazily: a task that writes nothing opens nothing (throws: the task ends)
        chain = Promise.resolve();
      }
      chain = chain.then(() => rot.write(Buffer.from(text))).catch(onError);
    },
    async close() {
      closed = true;
      await chain;
      await rot.close();
    },
  };
}

/** A sink collecting into memory (exec output). */
function bufferSink(): Sink & { text(): Buffer } {
  const parts: Buffer[] = [];
  return { write: (t) => void parts.push(Buffer.from(t)), close: async () => {}, text: () => Buffer.concat(parts) };
}

interface MockTask {
  cfg: MockTaskConfig;
  config: TaskConfig;
  run: Run;
  result?: ExitResult;
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
  /** Lets go of the host: running mock tasks no longer keep the process alive (the client's shutdown calls it). */
  shutdown(): Promise<void>;
} {
  const clock = opts.clock ?? realClock;
  const tasks = new Map<string, MockTask>();
  const name = opts.name ?? 'mock_driver';
  const hold = timerHold();

  const launch = (config: TaskConfig, cfg: MockTaskConfig, runForMs: number, startedAt: number): TaskHandle => {
    let onError: (e: unknown) => void = () => {};
    const sinks = { stdout: rotatingSink(config, 'stdout', (e) => onError(e)), stderr: rotatingSink(config, 'stderr', (e) => onError(e)) };
    const run = runCommand(clock, cfg, sinks, runForMs, cfg.pluginExitAfterMs, hold);
    const t: MockTask = { cfg, config, run };
    onError = (e) => run.fail(e);
    tasks.set(config.id, t);
    void run.done.then((r) => (t.result = r));
    return { driver: name, id: config.id, config, startedAt, state: { runForMs: cfg.runForMs } };
  };

  const get = (handle: TaskHandle) => {
    const t = tasks.get(handle.id);
    if (!t) throw new BerthError('task not found');
    return t;
  };

  return {
    name,
    capabilities: { fsIsolation: 'none', sendSignals: true, exec: true },
    running: () => [...tasks.values()].filter((t) => !t.run.finished).length,
    async shutdown() {
      hold.release(); // the client let go: tasks left running no longer keep the host alive
    },
    validateConfig(task: Task) {
      parseMockConfig(task.config);
    },
    async start(config, signal) {
      const cfg = parseMockConfig(config.task.config);
      if (cfg.startBlockForMs > 0) await sleep(cfg.startBlockForMs, signal, clock);
      if (cfg.startError) throw new DriverStartError(cfg.startError, cfg.startErrorRecoverable);
      if (signal.aborted) throw signal.reason;
      return launch(config, cfg, cfg.runForMs, clock.now());
    },
    async wait(handle, signal) {
      const t = get(handle);
      if (t.result) return t.result;
      if (signal.aborted) throw signal.reason;
      return new Promise<ExitResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        void t.run.done.then((r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        });
      });
    },
    async stop(handle) {
      const t = tasks.get(handle.id);
      if (!t || t.run.finished) return;
      if (t.cfg.killAfterMs > 0) {
        // The task may exit by itself before kill_after elapses.
        await new Promise<void>((resolve) => {
          const h = clock.setTimeout(() => {
            hold.drop(h);
            resolve();
          }, t.cfg.killAfterMs);
          hold.add(h);
          void t.run.done.then(() => {
            clock.clearTimeout(h);
            hold.drop(h);
            resolve();
          });
        });
      }
      t.run.cancel();
      await t.run.done;
    },
    async signal(handle) {
      const t = get(handle);
      if (t.run.finished) throw new BerthError('Task not running');
      if (t.cfg.signalError) throw new BerthError(t.cfg.signalError);
    },
    async destroy(handle, force) {
      const t = tasks.get(handle.id);
      if (!t) return;
      if (!t.run.finished) {
        if (!force) throw new BerthError('cannot destroy running task');
        t.run.cancel();
      }
      await t.run.done; // its log files are closed before the handle goes
      if (tasks.get(handle.id) === t) tasks.delete(handle.id);
    },
    async recover(handle) {
      const t = tasks.get(handle.id);
      if (t && !t.result?.pluginShutdown) return; // still known to this driver: nothing to do
      // Mock tasks live in the host: one saved before its start never existed in this process.
      if (!t && handle.starting) throw new TaskNotStartedError(`mock task ${handle.config.taskName} was never started`);
      const cfg = parseMockConfig(handle.config.task.config);
      const left = Math.max(0, cfg.runForMs - (clock.now() - handle.startedAt));
      launch(handle.config, cfg, left, handle.startedAt);
    },
    async exec(handle, command, execOpts: ExecOptions = {}): Promise<ExecResult> {
      const t = get(handle);
      if (!t.cfg.execCommand) throw new BerthError('no exec command is configured');
      let cmd = t.cfg.execCommand;
      if (command.length === 1 && command[0] === 'showinput') {
        const stdin = await stdinText(execOpts.stdin);
        cmd = { runForMs: 1, exitCode: 0, exitSignal: 0, stdout: { text: `TTY: ${execOpts.tty === true}\nStdin:\n${stdin}\n`, repeat: 0, everyMs: 0 } };
      }
      const stdout = bufferSink();
      const stderr = bufferSink();
      const run = runCommand(clock, cmd, { stdout, stderr }, cmd.runForMs, 0, hold);
      const signal = execOpts.signal;
      const onAbort = () => run.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) run.cancel();
      try {
        const r = await run.done;
        const out = { stdout: stdout.text(), stderr: stderr.text() };
        // The whole output is already here: a consumer's wait is honoured before the result.
        if (out.stdout.length) await execOpts.onOutput?.('stdout', out.stdout);
        if (out.stderr.length) await execOpts.onOutput?.('stderr', out.stderr);
        return { ...out, exitCode: r.exitCode, signal: r.signal, ...(r.err ? { err: r.err } : {}) };
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}

/** An exec's input as text (a stream is read to its end). */
async function stdinText(input: ExecOptions['stdin']): Promise<string> {
  if (input === undefined) return '';
  if (typeof input === 'string' || Buffer.isBuffer(input)) return Buffer.from(input).toString();
  const parts: Buffer[] = [];
  for await (const c of input) parts.push(c);
  return Buffer.concat(parts).toString();
}
