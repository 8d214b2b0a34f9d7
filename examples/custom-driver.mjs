// @ts-check
/**
 * A custom task driver: `countdown` runs in the host process (no child process), writes one line
 * per tick to the task's stdout log, and exits with `config.exit_code`. Register it under its
 * name in `createClient({ drivers })` and use that name as a task's `driver`.
 *
 *   node examples/custom-driver.mjs
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, DriverConfigError } from 'berth-runtime';

/**
 * @returns {import('berth-runtime').Driver}
 */
function createCountdownDriver() {
  /** In-memory state per running task, keyed by handle id; the handle itself stays plain JSON. */
  /** @type {Map<string, { timer?: NodeJS.Timeout, exit: Promise<import('berth-runtime').ExitResult>, finish: (r: import('berth-runtime').ExitResult) => void }>} */
  const running = new Map();

  return {
    name: 'countdown',
    capabilities: { fsIsolation: 'none', sendSignals: true },
    validateConfig(task) {
      const { from, exit_code = 0 } = task.config;
      if (!Number.isInteger(from) || Number(from) < 0) throw new DriverConfigError('config.from must be a non-negative integer');
      if (!Number.isInteger(exit_code)) throw new DriverConfigError('config.exit_code must be an integer');
    },
    async start(config) {
      const from = Number(config.task.config.from);
      const exitCode = Number(config.task.config.exit_code ?? 0);
      const log = join(config.allocDir.logsDir, `${config.taskName}.stdout.0`);
      /** @type {(r: import('berth-runtime').ExitResult) => void} */
      let finish = () => {};
      const exit = new Promise((resolve) => (finish = resolve));
      const entry = { timer: /** @type {NodeJS.Timeout | undefined} */ (undefined), exit, finish };
      running.set(config.id, entry);
      let n = from;
      const tick = async () => {
        await appendFile(log, n > 0 ? `${n}...\n` : 'liftoff\n');
        if (n-- > 0) entry.timer = setTimeout(tick, 50);
        else finish({ exitCode, signal: 0 });
      };
      await tick();
      return { driver: 'countdown', id: config.id, config, startedAt: Date.now(), state: { from } };
    },
    async wait(handle, signal) {
      const entry = running.get(handle.id);
      if (!entry) throw new Error(`countdown ${handle.id} is not running`);
      return new Promise((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        entry.exit.then(resolve);
      });
    },
    async stop(handle) {
      const entry = running.get(handle.id);
      clearTimeout(entry?.timer);
      entry?.finish({ exitCode: 0, signal: 2 });
    },
    async signal(handle, sig) {
      if (sig === 'SIGKILL' || sig === 'SIGTERM' || sig === 'SIGINT') await this.stop(handle, 0, sig);
    },
    async destroy(handle) {
      await this.stop(handle, 0, 'SIGKILL');
      running.delete(handle.id);
    },
    async recover(handle) {
      // In-process tasks do not outlive their host.
      if (!running.has(handle.id)) throw new Error(`countdown ${handle.id} did not survive the host`);
    },
  };
}

const dataDir = await mkdtemp(join(tmpdir(), 'berth-example-'));
const client = createClient({ dataDir, drivers: { countdown: createCountdownDriver() } });
try {
  const runner = client.addAlloc({
    id: randomUUID(),
    nodeId: 'example-node',
    jobId: 'launch',
    job: { id: 'launch', type: 'batch', taskGroups: [{ name: 'g', tasks: [{ name: 'rocket', driver: 'countdown', config: { from: 3, exit_code: 0 } }] }] },
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
  });
  await runner.waitFor('stopping');
  for await (const chunk of runner.logs('rocket', 'stdout')) process.stdout.write(chunk);
  const state = runner.alloc().taskStates?.rocket;
  console.log(`rocket: ${state?.state}, ${state?.events.map((e) => e.type).join(' → ')}`);
  await runner.destroy();
} finally {
  await client.shutdown();
  await rm(dataDir, { recursive: true, force: true });
}
