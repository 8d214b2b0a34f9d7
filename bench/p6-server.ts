/** P6's sending side: serves the previous alloc dir's snapshot over loopback HTTP until stdin ends. */
import { AllocDir } from '../actors/allocdir/alloc-dir.ts';
import { createSnapshotServer } from '../actors/migrate/snapshot-server.ts';
import { childDone, childPayload } from './lib/proc.ts';

const { clientAllocDir, allocId, token } = childPayload<{ clientAllocDir: string; allocId: string; token: string }>();
const ad = new AllocDir(clientAllocDir, allocId);
await ad.build(); // the data is already in alloc/data; build keeps it
const srv = await createSnapshotServer({ lookup: (id) => (id === allocId ? ad : undefined), token });
childDone({ url: srv.url });
process.stdin.resume();
process.stdin.on('end', () => void srv.close().then(() => process.exit(0)));
