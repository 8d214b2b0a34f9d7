/**
 * The `raw_exec` driver: runs `config.command` with `config.args`, unisolated, as the user berth
 * runs as, with the task dir as working directory. Each task runs under a detached executor
 * (see ./executor/executor.mjs) so it outlives the host process; its stdout/stderr go to
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
export type RawExecDriverOptions = ProcessDriverOptions;

/** Creates the `raw_exec` driver. */
export function createRawExecDriver(opts: RawExecDriverOptions = {}): Driver {
  return createProcessDriver({
    name: 'raw_exec',
    capabilities: { fsIsolation: 'none', sendSignals: true },
    prepare: async () => ({ mode: 'raw' }),
  }, opts);
}
