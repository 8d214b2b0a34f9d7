// @ts-check
/**
 * A sticky ephemeral disk: a replacement allocation waits for the one it replaces to stop, then
 * takes over its `alloc/data` (moved locally, never copied through the task).
 *
 *   node examples/sticky-disk.mjs
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'berth-runtime';

/**
 * @param {string} script a /bin/sh script
 * @param {Partial<import('berth-runtime').Allocation>} [over]
 * @returns {import('berth-runtime').Allocation}
 */
function alloc(script, over = {}) {
  return {
    id: randomUUID(),
    nodeId: 'example-node',
    jobId: 'cache',
    job: {
      id: 'cache',
      type: 'batch',
      taskGroups: [
        { name: 'db', ephemeralDisk: { sticky: true }, tasks: [{ name: 'db', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] } }] },
      ],
    },
    taskGroup: 'db',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
    ...over,
  };
}

/** @param {import('berth-runtime').AllocRunner} r */
async function stdout(r) {
  let text = '';
  for await (const chunk of r.logs('db', 'stdout')) text += chunk;
  return text.trim();
}

const dataDir = await mkdtemp(join(tmpdir(), 'berth-example-'));
const client = createClient({ dataDir });
client.bus.of('migration.done').subscribe((m) => console.log(`moved the data of ${m.previousAllocId.slice(0, 8)} (${m.mode}, ${m.ms} ms)`));
try {
  const v1 = alloc('echo "written by v1 at $(date +%T)" > "$NOMAD_ALLOC_DIR/data/state.txt"; echo saved');
  const r1 = client.addAlloc(v1);
  await r1.waitFor('stopping');
  console.log(`v1: ${await stdout(r1)}`);

  const v2 = alloc('cat "$NOMAD_ALLOC_DIR/data/state.txt"', { previousAllocation: v1.id });
  const r2 = client.addAlloc(v2);
  await r2.waitFor('stopping');
  console.log(`v2 read: ${await stdout(r2)}`);
  await Promise.all([r1.destroy(), r2.destroy()]);
} finally {
  await client.shutdown();
  await rm(dataDir, { recursive: true, force: true });
}
