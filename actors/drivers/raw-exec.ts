/**
 * The `raw_exec` driver: runs `config.command` with `config.args`, unisolated, as the user berth
 * runs as, with the task dir as working directory. Each task runs under berth's detached
 * supervisor and a shim of its own (see ./executor/supervisor.mjs and ./executor/shim.mjs), so it
 * outlives the host process and the supervisor; its stdout/stderr go to
 * `<alloc>/alloc/logs/<task>.stdout.N` / `.stderr.N`.
 *
 * ```ts
 * const driver = createRawExecDriver();
 * // task.config: { command: 'redis-server', args: ['--port', '6379'] }
 * ```
 * @module
 */
import type { Driver } from './driver.ts';
import { createProcessDriver, type ProcessDriverOptions } from './executor/process-driver.ts';

/** Options of {@link createRawExecDriver}. */
export interface RawExecDriverOptions extends ProcessDriverOptions {
  /**
   * Whether a task's `resources` become cgroup limits (default true). Off, raw_exec tasks still
   * get a cgroup (when the client has cgroups) for clean kills and stats, but no limits.
   */
  resourceLimits?: boolean;
}

/** Creates the `raw_exec` driver. */
export function createRawExecDriver(opts: RawExecDriverOptions = {}): Driver {
  return createProcessDriver(
    {
      name: 'raw_exec',
      capabilities: { fsIsolation: 'none', sendSignals: true, exec: true },
      applyLimits: opts.resourceLimits ?? true,
      prepare: async () => ({ mode: 'raw' }),
    },
    opts,
  );
}
