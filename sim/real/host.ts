/**
 * The host process of a real `crash` schedule: a berth client on `<dataDir>` that adds the
 * given allocs (and maybe begins destroying the first), says `added`, and lives until the
 * schedule kills it with SIGKILL. Usage: node --import tsx host.ts <dataDir> <json>
 */
import { createClient } from '../../actors/client/client.ts';
import type { Allocation } from '../../model/types.ts';

const [dataDir, json] = process.argv.slice(2) as [string, string];
const { allocs, destroyFirst } = JSON.parse(json) as { allocs: Allocation[]; destroyFirst: boolean };
const client = createClient({ dataDir, maxKillTimeoutMs: 2000 });
const runners = allocs.map((a) => client.addAlloc(a));
process.stdout.write('added\n');
if (destroyFirst) setTimeout(() => void runners[0]!.destroy(), 300);
setInterval(() => {}, 60_000);
