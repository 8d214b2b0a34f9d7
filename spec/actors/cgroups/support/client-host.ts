/**
 * A stand-in host for the restore spec: a client on the given data dir runs one allocation,
 * prints `ready` once its task has a driver handle, then idles until it is killed (kill -9).
 * Usage: node --import tsx client-host.ts <dataDir> <allocJson>
 */
import { createClient } from '../../../../actors/client/client.ts';

const client = createClient({ dataDir: process.argv[2]! });
const r = client.addAlloc(JSON.parse(process.argv[3]!));
client.bus.of('task.state').subscribe((m) => {
  if (m.allocId === r.allocId && m.state.state === 'running') process.stdout.write('ready\n');
});
setInterval(() => {}, 60_000);
