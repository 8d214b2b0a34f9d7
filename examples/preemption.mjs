// @ts-check
/**
 * Preemption: a high-priority allocation evicts two running low-priority ones and waits (one
 * watcher actor per evicted allocation, each watching its own id) until both have stopped.
 *
 *   node examples/preemption.mjs
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'berth-runtime';

/**
 * An allocation of one mock_driver task that runs until stopped.
 * @param {string} job @param {number} priority @param {string[]} [preempted]
 * @returns {import('berth-runtime').Allocation}
 */
function alloc(job, priority, preempted) {
  return {
    id: randomUUID(),
    nodeId: 'example-node',
    jobId: job,
    job: { id: job, type: 'service', priority, taskGroups: [{ name: 'app', tasks: [{ name: 'work', driver: 'mock_driver', config: { run_for: '10m' } }] }] },
    taskGroup: 'app',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
    ...(preempted ? { preemptedAllocations: preempted } : {}),
  };
}

const dataDir = await mkdtemp(join(tmpdir(), 'berth-example-'));
const client = createClient({ dataDir });
/** @type {Map<string, string>} */
const names = new Map();
const who = (/** @type {string} */ id) => names.get(id) ?? id.slice(0, 8);
client.bus.of('watcher.waiting').subscribe((m) => console.log(`${who(m.allocId)} waits for ${m.role} ${who(m.watchedAllocId)}`));
client.bus.of('watcher.released').subscribe((m) => console.log(`${who(m.allocId)} released by ${who(m.watchedAllocId)} (${m.reason})`));
try {
  const low = [alloc('batch-low', 20), alloc('batch-low', 20)];
  low.forEach((a, i) => names.set(a.id, `low[${i}]`));
  const lowRunners = low.map((a) => client.addAlloc(a));
  await Promise.all(lowRunners.map((r) => r.waitForTasks('running')));

  const high = alloc(
    'web-high',
    80,
    low.map((a) => a.id),
  );
  names.set(high.id, 'high');
  const highRunner = client.addAlloc(high);
  await highRunner.waitFor('waiting-prev');
  console.log(`high is waiting: ${highRunner.isWaiting()}`);

  // The servers evict the victims: an update with a terminal desired status stops each one.
  for (const a of low) client.updateAlloc({ ...a, desiredStatus: 'evict', allocModifyIndex: 2 });
  await highRunner.waitForTasks('running');
  console.log(`high is running; victims: ${lowRunners.map((r) => r.alloc().clientStatus).join(', ')}`);
  await Promise.all(client.runners().map((r) => r.destroy()));
} finally {
  await client.shutdown();
  await rm(dataDir, { recursive: true, force: true });
}
