/**
 * A host process for the host-crash specs: a berth client on `<dataDir>` that drives allocations
 * to chosen points of their lifecycle, says so on stdout (JSON lines), and is then killed with
 * SIGKILL, by the spec or by itself at an exact instruction. Usage:
 *   node --import tsx crash-client.ts <dataDir> <scenario>
 */
import { createClient } from '../../../../actors/client/client.ts';
import type { Driver } from '../../../../actors/drivers/driver.ts';
import type { Allocation, Task } from '../../../../model/types.ts';
import { makeAlloc } from '../../../support/fixtures.ts';
import { crashTask, wrappedRawExec } from './crash-support.ts';

const [dataDir, scenario] = process.argv.slice(2) as [string, string];
const say = (msg: Record<string, unknown>) => process.stdout.write(JSON.stringify(msg) + '\n');
const crash = (): void => void process.kill(process.pid, 'SIGKILL');

const drivers: Record<string, Driver> = {
  // Starts the process, then never returns from start: the host dies mid-start.
  hang_exec: wrappedRawExec('hang_exec', { afterStart: () => new Promise(() => {}) }),
  // The host dies right after the process exists and before berth can save its handle.
  crash_exec: wrappedRawExec('crash_exec', { afterStart: crash }),
  // The host dies right after the task's exit is known, before berth records it.
  exit_crash_exec: wrappedRawExec('exit_crash_exec', { afterWait: crash }),
};
const client = createClient({ dataDir, drivers });
const add = (label: string, task: Task, over: Partial<Allocation> & { jobType?: 'batch' } = {}) => {
  const alloc = makeAlloc([task], over);
  say({ alloc: label, id: alloc.id });
  return client.addAlloc(alloc);
};
// Every task event since the start, so a wait never misses one that came early.
const seen: Array<{ allocId: string; type: string }> = [];
const waiters = new Set<() => void>();
client.bus.of('task.event').subscribe((m) => {
  seen.push({ allocId: m.allocId, type: m.event.type });
  for (const w of [...waiters]) w();
});
const event = (allocId: string, type: string) =>
  new Promise<void>((resolve) => {
    const check = () => {
      if (!seen.some((e) => e.allocId === allocId && e.type === type)) return;
      waiters.delete(check);
      resolve();
    };
    waiters.add(check);
    check();
  });

if (scenario === 'phases') {
  const svc = add('running', crashTask(dataDir, 'running'));
  const batch = add('finished', crashTask(dataDir, 'finished', { batch: true }), { jobType: 'batch' });
  const stopping = add('stopping', crashTask(dataDir, 'stopping', { ignoreInt: true, killTimeoutMs: 30_000 }));
  const destroying = add('destroying', crashTask(dataDir, 'destroying', { ignoreInt: true, killTimeoutMs: 30_000 }));
  const starting = add('starting', crashTask(dataDir, 'starting', { driver: 'hang_exec' }));
  const terminal = add('terminal', crashTask(dataDir, 'terminal'), { clientStatus: 'complete' });
  await Promise.all([svc, stopping, destroying].map((r) => event(r.allocId, 'Started')));
  await batch.waitFor('stopping');
  await new Promise((resolve) => setTimeout(resolve, 20)); // its complete view reaches the store
  const killing = [event(stopping.allocId, 'Killing'), event(destroying.allocId, 'Killing')];
  client.updateAlloc({ ...stopping.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
  void destroying.destroy();
  await Promise.all(killing);
  await event(starting.allocId, 'Task Setup');
  await terminal.waitFor('stopping');
  say({ ready: true });
} else if (scenario === 'spawn-save') {
  add('spawned', crashTask(dataDir, 'spawned', { driver: 'crash_exec' }));
} else if (scenario === 'exit-record') {
  add('exited', crashTask(dataDir, 'exited', { driver: 'exit_crash_exec', batch: true }), { jobType: 'batch' });
}
setInterval(() => {}, 60_000);
