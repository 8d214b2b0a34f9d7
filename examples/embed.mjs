// @ts-check
/**
 * Embedding berth: run examples/hello.json in your own process and print the task's output.
 *
 *   node examples/embed.mjs
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, parseAllocation } from 'berth-runtime';

const json = JSON.parse(await readFile(new URL('./hello.json', import.meta.url), 'utf8'));
// parseAllocation wants an id and a node id (berth run fills them in for hand-written files).
const alloc = parseAllocation({ ...json, id: randomUUID(), nodeId: 'example-node' });

const dataDir = await mkdtemp(join(tmpdir(), 'berth-example-'));
const client = createClient({ dataDir });
try {
  client.bus.of('task.event').subscribe((m) => console.log(`event  ${m.task}: ${m.event.type}: ${m.event.displayMessage}`));
  const runner = client.addAlloc(alloc);
  await runner.waitFor('stopping'); // a batch alloc stops by itself once its task exited
  for await (const chunk of runner.logs('hello', 'stdout')) process.stdout.write(`stdout ${chunk}`);
  console.log(`status ${runner.alloc().clientStatus}`);
  await runner.destroy();
} finally {
  await client.shutdown();
  await rm(dataDir, { recursive: true, force: true });
}
