/**
 * A host for the state-store damage spec: a berth client on `<dataDir>` running two allocations
 * (raw_exec shells that record each start in `<dataDir>/runs-<label>`), which says `ready` once
 * both run and their handles are stored, and is then killed with SIGKILL by the spec. Usage:
 *   node --import tsx damage-host.ts <dataDir>
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../../../../actors/client/client.ts';
import { makeAlloc } from '../../../support/fixtures.ts';
import { crashTask } from '../../client/support/crash-support.ts';

const [dataDir] = process.argv.slice(2) as [string];
const say = (msg: Record<string, unknown>) => process.stdout.write(JSON.stringify(msg) + '\n');
const client = createClient({ dataDir });
const runners = ['a', 'b'].map((label) => {
  const alloc = makeAlloc([crashTask(dataDir, label)]);
  say({ alloc: label, id: alloc.id });
  return client.addAlloc(alloc);
});
await Promise.all(runners.map((r) => r.waitFor('running')));
// Each shell has recorded its start, and its handle is in the store.
while (!['a', 'b'].every((l) => existsSync(join(dataDir, `runs-${l}`)))) await new Promise((resolve) => setTimeout(resolve, 10));
await new Promise((resolve) => setTimeout(resolve, 50));
say({ ready: true });
await new Promise(() => {}); // until SIGKILL
