/**
 * Runs one raw_exec task with resources on a client and prints, as one JSON line, the
 * `cgroups.detected` message and the task's Driver event about resources. The fallback spec
 * runs it as `nobody`. Usage: node --import tsx nobody-client.ts <dataDir>
 */
import { createClient } from '../../../../actors/client/client.ts';
import { makeAlloc } from '../../../support/fixtures.ts';

const client = createClient({ dataDir: process.argv[2]! });
let detected: unknown;
client.bus.of('cgroups.detected').subscribe((m) => (detected = m));
const r = client.addAlloc(
  makeAlloc([{ name: 'web', driver: 'raw_exec', config: { command: '/bin/true' }, resources: { memoryMB: 64, cpu: 100 } }], { jobType: 'batch' }),
);
await r.waitFor('stopping');
const driver = r.alloc().taskStates!.web!.events.find((e) => e.type === 'Driver')?.displayMessage;
const status = r.alloc().clientStatus;
await r.destroy();
await client.shutdown();
process.stdout.write(JSON.stringify({ detected, driver, status }) + '\n');
