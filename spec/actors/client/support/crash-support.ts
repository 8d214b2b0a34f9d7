/**
 * What the host-crash specs and their host process (crash-client.ts) share: the tasks (each
 * appends `$$` to `<dataDir>/runs-<label>` when it starts, so a spec can count runs and find the
 * task's processes by their command line) and raw_exec wrapped to crash at exact points.
 */
import { join } from 'node:path';
import type { Driver, TaskHandle } from '../../../../actors/drivers/driver.ts';
import { createRawExecDriver } from '../../../../actors/drivers/raw-exec.ts';
import type { Task } from '../../../../model/types.ts';

/** A raw_exec task that records its start; `ignoreInt` makes it sit out the kill signal. */
export function crashTask(dir: string, label: string, opts: { driver?: string; batch?: boolean; ignoreInt?: boolean; killTimeoutMs?: number } = {}): Task {
  const runs = join(dir, `runs-${label}`);
  const body = opts.batch ? 'exit 0' : `${opts.ignoreInt ? "trap '' INT;" : ''} while :; do sleep 0.05; done`;
  return {
    name: 'web',
    driver: opts.driver ?? 'raw_exec',
    config: { command: '/bin/sh', args: ['-c', `echo $$ >> ${runs}; ${body}`] },
    killTimeoutMs: opts.killTimeoutMs ?? 2000,
  };
}

/**
 * raw_exec under another name, with `hooks` after start and wait. Its handles name it, so every
 * call of a task it started comes back to it.
 */
export function wrappedRawExec(name: string, hooks: { afterStart?: () => Promise<void> | void; afterWait?: () => void } = {}): Driver {
  const inner = createRawExecDriver();
  const raw = (h: TaskHandle): TaskHandle => ({ ...h, driver: inner.name });
  const mine = (h: TaskHandle): TaskHandle => ({ ...h, driver: name });
  return {
    ...inner,
    name,
    async start(config, signal) {
      const h = await inner.start(config, signal);
      await hooks.afterStart?.();
      return mine(h);
    },
    async wait(handle, signal) {
      const r = await inner.wait(raw(handle), signal);
      hooks.afterWait?.();
      return r;
    },
    stop: (h, timeoutMs, sig) => inner.stop(raw(h), timeoutMs, sig),
    signal: (h, sig) => inner.signal(raw(h), sig),
    destroy: (h, force) => inner.destroy(raw(h), force),
    recover: async (h) => mine((await inner.recover(raw(h))) ?? raw(h)),
  };
}
