// @ts-check
/**
 * A custom alloc-runner hook: runs after berth's own hooks (alloc dir, waiting for previous
 * allocations, data migration) and before the tasks. Here it writes a file the task reads, and
 * reports when the allocation's tasks are done and when it is destroyed.
 *
 *   node examples/custom-hook.mjs
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'berth-runtime';

/** @type {import('berth-runtime').RunnerHook} */
const greeting = {
  name: 'greeting',
  async prerun({ alloc, allocDir }) {
    await writeFile(join(allocDir.dataDir, 'greeting.txt'), `hello, ${alloc.jobId}\n`);
    console.log(`hook: prerun wrote greeting.txt for ${alloc.id.slice(0, 8)}`);
  },
  async postrun({ alloc }) {
    console.log(`hook: postrun, client status ${alloc.clientStatus}`);
  },
  async destroy({ alloc }) {
    console.log(`hook: destroy ${alloc.id.slice(0, 8)}`);
  },
};

const dataDir = await mkdtemp(join(tmpdir(), 'berth-example-'));
const client = createClient({ dataDir, hooks: [greeting] });
try {
  const runner = client.addAlloc({
    id: randomUUID(),
    nodeId: 'example-node',
    jobId: 'greeter',
    job: {
      id: 'greeter',
      type: 'batch',
      taskGroups: [
        { name: 'g', tasks: [{ name: 'read', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', 'cat "$NOMAD_ALLOC_DIR/data/greeting.txt"'] } }] },
      ],
    },
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
  });
  await runner.waitFor('stopping');
  for await (const chunk of runner.logs('read', 'stdout')) process.stdout.write(`task: ${chunk}`);
  await runner.destroy();
} finally {
  await client.shutdown();
  await rm(dataDir, { recursive: true, force: true });
}
