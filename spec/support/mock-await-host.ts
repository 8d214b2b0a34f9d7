/**
 * Run as a child process by the mock driver's host-lifetime spec. `await`: awaits a mock-driver
 * batch alloc at top level and prints its task's state (the mock task's timers alone keep the
 * host alive meanwhile). `shutdown`: starts a mock task that runs for an hour, then shuts the
 * client down, and must exit on its own at once (after a second client tidied up).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { createClient } from '../../actors/client/client.ts';
import { parseAllocation } from '../../model/parse.ts';

const mode = process.argv[2];
const dataDir = mkdtempSync(join(tmpdir(), 'berth-mock-host-'));
const client = createClient({ dataDir, gcIntervalMs: 0 });
const alloc = parseAllocation({
  id: randomUUID(),
  nodeId: 'n1',
  job: {
    id: 'j',
    type: 'batch',
    taskGroups: [{ name: 'g', tasks: [{ name: 't', driver: 'mock_driver', config: { run_for: mode === 'await' ? '300ms' : '1h' } }] }],
  },
  taskGroup: 'g',
  desiredStatus: 'run',
  clientStatus: 'pending',
  allocModifyIndex: 1,
});
const runner = client.addAlloc(alloc);
if (mode === 'await') {
  await runner.waitFor('stopping');
  const t = runner.alloc().taskStates!.t!;
  console.log(`task ${t.state} failed=${t.failed} finished=${t.finishedAt !== undefined}`);
  await runner.destroy();
  await client.shutdown();
} else {
  await firstValueFrom(client.bus.of('task.event').pipe(filter((m) => m.event.type === 'Started')));
  await client.shutdown();
  console.log('shut down');
  // Tidy up through a second client (restore, destroy, shutdown): the first one's mock task is
  // still pending in this process, and must not keep it alive either.
  const second = createClient({ dataDir, gcIntervalMs: 0 });
  await second.restore();
  await second.runner(alloc.id)!.destroy();
  await second.shutdown();
}
rmSync(dataDir, { recursive: true, force: true });
